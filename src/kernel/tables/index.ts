// The kernel's own tables: tenancy (tenants, users, Spaces, memberships, API tokens: what access is resolved from),
// the event log and rate-limit counters, the job queue. Every module's tables live in src/modules/<name>/tables.ts;
// drizzle.config.ts collects both.
export * from './tenancy'
export * from './events'
export * from './jobs'
