export * from './tenancy'
export * from './kernel'
