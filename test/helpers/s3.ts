import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
// s3rver: an S3-compatible server in Node/Koa (the `s3rver` package), run in this process on 127.0.0.1 with its
// objects in a temporary folder. It checks AWS Signature V4 (headers and presigned query strings), serves ranges,
// and implements multipart uploads, listing with continuation tokens and deletes: what Bun.S3Client sends.
import S3rver from 's3rver'

export interface S3Sink {
  endpoint: string
  bucket: string
  /** The environment that points the service at this server (ASSET_STORE=s3). */
  env: Record<string, string>
  /** Keys in the bucket under `prefix`. */
  keys(prefix?: string): Promise<string[]>
  close(): Promise<void>
}

/** s3rver's fixed credentials (it refuses any other). */
const KEY_ID = 'S3RVER'
const SECRET = 'S3RVER'

export async function startS3(bucket = 'assets-test'): Promise<S3Sink> {
  const dir = await mkdtemp(join(tmpdir(), 's3rver-'))
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: bucket, configs: [] }] })
  const info = (await server.run()) as unknown as { address: string; port: number }
  const endpoint = `http://127.0.0.1:${info.port}`
  const client = new Bun.S3Client({ endpoint, bucket, accessKeyId: KEY_ID, secretAccessKey: SECRET, region: 'us-east-1' })
  return {
    endpoint,
    bucket,
    env: { ASSET_STORE: 's3', S3_ENDPOINT: endpoint, S3_BUCKET: bucket, S3_REGION: 'us-east-1', S3_ACCESS_KEY_ID: KEY_ID, S3_SECRET_ACCESS_KEY: SECRET },
    async keys(prefix = '') {
      const out: string[] = []
      let continuationToken: string | undefined
      for (;;) {
        const page = await client.list({ prefix, ...(continuationToken ? { continuationToken } : {}) })
        for (const o of page.contents ?? []) out.push(o.key)
        if (!page.isTruncated || !page.nextContinuationToken) return out.sort()
        continuationToken = page.nextContinuationToken
      }
    },
    async close() {
      await server.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}
