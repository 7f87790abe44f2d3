import type { Config } from '../config'
import { migrateAssets, MigrateError, type MigrateProgress } from '../modules/assets/migrate'
import { openCommandKernel } from './kernel'

// `content-service assets migrate --to s3|postgres`: moves asset bytes between the Postgres store and the S3 bucket
// (src/modules/assets/migrate.ts), printing progress; resumable: run it again after any stop.

export class AssetsCommandError extends Error {}

export async function runAssetsMigrate(
  config: Config,
  opts: { to: string },
  rt: { print?: (line: string) => void; signal?: AbortSignal } = {},
): Promise<MigrateProgress> {
  if (opts.to !== 's3' && opts.to !== 'postgres') throw new AssetsCommandError(`--to must be s3 or postgres, got "${opts.to}"`)
  if (!config.s3) {
    throw new AssetsCommandError('assets migrate moves bytes to or from the S3 bucket: set S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (and S3_ENDPOINT) first')
  }
  const kernel = await openCommandKernel(config)
  try {
    return await migrateAssets(kernel, { to: opts.to, print: rt.print ?? ((line) => console.log(line)), signal: rt.signal })
  } catch (err) {
    if (err instanceof MigrateError) throw new AssetsCommandError(err.message)
    throw err
  } finally {
    await kernel.close()
  }
}
