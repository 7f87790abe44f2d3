// A throw-away database for one benchmark run: a fresh PGlite folder, or a fresh database on a Postgres server
// (`<pgBase>/<name>`), with the environment a server process needs to use it and a cleanup that removes it.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'

export interface ScratchDatabase {
  /** DATA_DIR or DATABASE_URL, plus a random SERVICE_SECRET_KEY shared by seeding and server processes. */
  env: Record<string, string>
  cleanup(): Promise<void>
}

export async function scratchDatabase(driver: 'pglite' | 'postgres', pgBase: string, prefix: string): Promise<ScratchDatabase> {
  const env: Record<string, string> = { SERVICE_SECRET_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex') }
  if (driver === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), `${prefix.replaceAll('_', '-')}-`))
    env.DATA_DIR = dir
    return { env, cleanup: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const name = `${prefix}_${Date.now().toString(36)}`
  const admin = postgres(`${pgBase}/postgres`, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  await admin.end()
  env.DATABASE_URL = `${pgBase}/${name}`
  return {
    env,
    async cleanup() {
      const a = postgres(`${pgBase}/postgres`, { max: 1, onnotice: () => {} })
      await a.unsafe(`drop database if exists ${name} with (force)`)
      await a.end()
    },
  }
}
