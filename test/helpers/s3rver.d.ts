// The part of the `s3rver` package's API that test/helpers/s3.ts uses (the package ships no types).
declare module 's3rver' {
  interface S3rverOptions {
    port?: number
    address?: string
    silent?: boolean
    directory: string
    configureBuckets?: { name: string; configs: unknown[] }[]
  }
  export default class S3rver {
    constructor(options: S3rverOptions)
    run(): Promise<unknown>
    close(): Promise<void>
  }
}
