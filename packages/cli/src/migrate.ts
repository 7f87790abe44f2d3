/**
 * Content migrations: `migrate create <name>` writes a migration file, `migrate run <name>` runs it over a Space. A
 * migration is a function from a block to a block for one blueprint; it is applied to every block of that blueprint
 * (nested ones included) in every translation of every Story. A run is dry unless `--apply`: it shows per Story what
 * would change. Applied, each changed translation is saved with `expected_version_no` = the version read, so a Story
 * saved by someone else in between is reported as a conflict and never overwritten; `--publish` publishes again the
 * Stories that were published without unpublished changes before the run.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Api } from './archive'
import type { Block, Migration, MigrationContext } from './migration-types'

export type { Block, Migration, MigrationContext }

export const MIGRATION_EXTENSIONS = ['.mjs', '.js', '.ts'] as const

/** The text of a new migration file for a blueprint. `.mjs` is checked by TypeScript through JSDoc (`// @ts-check`). */
export function migrationTemplate(component: string, ts: boolean): string {
  const body = `  component: ${JSON.stringify(component)},
  // Called for every "${component}" block (nested ones too) of every translation of every Story.
  // Return the block as it should be (null removes it); an unchanged block is not saved.
  migrate(block, { story, lang }) {
    return { ...block }
  },`
  return ts
    ? `import type { Migration } from '@content-service/cli/migrate'\n\nexport default {\n${body}\n} satisfies Migration\n`
    : `// @ts-check\n\n/** @type {import('@content-service/cli/migrate').Migration} */\nexport default {\n${body}\n}\n`
}

export function createMigration(dir: string, name: string, component: string, ts: boolean): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/.test(name)) throw new Error('the name: letters, digits, _ . - (at most 100)')
  for (const ext of MIGRATION_EXTENSIONS) if (existsSync(join(dir, `${name}${ext}`))) throw new Error(`${join(dir, `${name}${ext}`)} exists`)
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${name}${ts ? '.ts' : '.mjs'}`)
  writeFileSync(file, migrationTemplate(component, ts))
  return file
}

export async function loadMigration(dir: string, name: string): Promise<{ file: string; migration: Migration }> {
  const file = MIGRATION_EXTENSIONS.map((ext) => join(dir, `${name}${ext}`)).find((f) => existsSync(f))
  if (!file) throw new Error(`no migration ${name} in ${dir} (${MIGRATION_EXTENSIONS.map((e) => name + e).join(', ')})`)
  let mod: { default?: Migration }
  try {
    mod = await import(pathToFileURL(resolve(file)).href)
  } catch (err) {
    const hint = file.endsWith('.ts') ? ' (a .ts migration needs a runtime that strips types: Node 22.18+/23.6+, Bun or Deno; or write it as .mjs)' : ''
    throw new Error(`${file}: ${(err as Error).message}${hint}`)
  }
  const m = mod.default
  if (!m || typeof m.component !== 'string' || typeof m.migrate !== 'function') throw new Error(`${file}: export default {component, migrate(block)}`)
  return { file, migration: m }
}

/** The value with every block of the migration's blueprint replaced by what the migration makes of it. */
async function apply(value: unknown, m: Migration, ctx: MigrationContext): Promise<unknown> {
  if (Array.isArray(value)) {
    const out: unknown[] = []
    for (const v of value) {
      const r = await apply(v, m, ctx)
      if (r !== REMOVED) out.push(r)
    }
    return out
  }
  if (!value || typeof value !== 'object') return value
  let obj = value as Record<string, unknown>
  if (typeof obj.component === 'string' && typeof obj._uid === 'string' && obj.component === m.component) {
    const r = await m.migrate(structuredClone(obj) as Block, ctx)
    if (r === null) return REMOVED
    if (!r || typeof r !== 'object' || typeof r.component !== 'string') throw new Error(`the migration returned ${JSON.stringify(r)} for a block (a block or null)`)
    obj = r
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(obj)) out[k] = await apply(v, m, ctx)
  return out
}
const REMOVED = Symbol('removed')

/** The differences between two values, one line per changed leaf: `path: old → new`. */
export function diffValues(a: unknown, b: unknown, path = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return []
  const isObj = (v: unknown) => v !== null && typeof v === 'object'
  if (isObj(a) && isObj(b) && Array.isArray(a) === Array.isArray(b)) {
    const keys = Array.isArray(a) ? [...Array(Math.max(a.length, (b as unknown[]).length)).keys()].map(String) : [...new Set([...Object.keys(a as object), ...Object.keys(b as object)])]
    return keys.flatMap((k) => diffValues((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path ? `${path}/${k}` : k))
  }
  const show = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v))
  return [`${path || '(root)'}: ${show(a)} → ${show(b)}`]
}

export interface MigratedTranslation {
  uuid: string
  full_path: string
  lang: string
  /**
   * unchanged; changed (dry run: would change); saved; conflict (someone saved in between: not written); failed;
   * done (migrated by an earlier run of this migration, not edited since: never migrated twice)
   */
  result: 'unchanged' | 'changed' | 'saved' | 'conflict' | 'failed' | 'done'
  version_no: number
  diff: string[]
  error?: string
  published?: boolean
}

export interface RunOptions {
  apply: boolean
  publish: boolean
  startsWith?: string
  onProgress?: (s: string) => void
  /** What earlier runs of this migration wrote into this Space (kept by the caller, `save`d after each write). */
  state?: MigrationState
  save?: (s: MigrationState) => void
}

/**
 * A migration's progress in one Space: the SHA-256 of each translation's content as the migration made it, recorded
 * before it is written — so a translation still holding exactly that content (the write reached the server, even if
 * its answer was lost) is not migrated again — and the Stories to publish again once written.
 */
export interface MigrationState {
  migrated: Record<string, string>
  publish: string[]
}

const hashOf = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex')

const enc = encodeURIComponent

interface Row {
  uuid: string
  full_path: string
  name: string
  is_folder: boolean
  status: string
  has_unpublished_changes: boolean
  translations: string[]
}

async function listStories(api: Api, space: string): Promise<Row[]> {
  const out: Row[] = []
  for (let page = 1; ; page++) {
    const r = await api.call<{ data: Row[] }>('GET', `/spaces/${enc(space)}/stories?page=${page}&per_page=100`)
    out.push(...r.data)
    if (r.data.length < 100) return out
  }
}

export async function runMigration(api: Api, space: string, m: Migration, o: RunOptions): Promise<MigratedTranslation[]> {
  const sp = `/spaces/${enc(space)}`
  const prefix = o.startsWith ? `/${o.startsWith.replace(/^\/+/, '')}` : undefined
  const rows = (await listStories(api, space)).filter((s) => !s.is_folder && (!prefix || `/${s.full_path.replace(/^\/+/, '')}`.startsWith(prefix)))
  const results: MigratedTranslation[] = []
  const state: MigrationState = o.state ?? { migrated: {}, publish: [] }
  const save = () => o.apply && o.save?.(state)
  for (const [i, s] of rows.entries()) {
    o.onProgress?.(`${i + 1}/${rows.length} ${s.full_path}`)
    // An interrupted run may have saved the Story without publishing it again: it is recorded.
    const republish = (o.publish && s.status === 'published' && !s.has_unpublished_changes) || state.publish.includes(s.uuid)
    const pending = state.publish.includes(s.uuid)
    let expected: number | undefined
    let conflict = false
    let saved = false
    for (const lang of s.translations) {
      const v = (await api.call<{ data: { version_no: number; content: unknown; name: string } }>('GET', `${sp}/stories/${s.uuid}?lang=${enc(lang)}`)).data
      // The first read fixes the version this run starts from: a save by anyone else afterwards is a conflict.
      expected ??= v.version_no
      const entry: MigratedTranslation = { uuid: s.uuid, full_path: s.full_path, lang, result: 'unchanged', version_no: expected, diff: [] }
      results.push(entry)
      if (conflict) {
        entry.result = 'conflict'
        continue
      }
      const key = `${s.uuid} ${lang}`
      if (state.migrated[key] === hashOf(v.content)) {
        entry.result = 'done'
        continue
      }
      let next: unknown
      try {
        next = await apply(v.content, m, { story: { uuid: s.uuid, full_path: s.full_path, name: v.name }, lang })
      } catch (err) {
        entry.result = 'failed'
        entry.error = (err as Error).message
        continue
      }
      entry.diff = diffValues(v.content, next)
      if (!entry.diff.length) continue
      entry.result = 'changed'
      if (!o.apply) continue
      state.migrated[key] = hashOf(next)
      if (republish && !state.publish.includes(s.uuid)) state.publish.push(s.uuid)
      save()
      try {
        const r = await api.call<{ data: { version_no: number } }>('PUT', `${sp}/stories/${s.uuid}`, { lang, content: next, expected_version_no: expected })
        expected = r.data.version_no
        entry.result = 'saved'
        entry.version_no = r.data.version_no
        saved = true
      } catch (err) {
        const e = err as { status?: number; code?: string; message: string }
        if (e.status === 409 && e.code === 'version_conflict') {
          entry.result = 'conflict'
          conflict = true
        } else {
          entry.result = 'failed'
          entry.error = e.message
        }
      }
    }
    const mine = results.filter((r) => r.uuid === s.uuid)
    if (mine.some((r) => r.result === 'conflict')) {
      // Someone else saved it: their draft is never published by a migration.
      state.publish = state.publish.filter((u) => u !== s.uuid)
      save()
    } else if (o.apply && republish && (saved || pending) && !mine.some((r) => r.result === 'failed')) {
      await api.call('POST', `${sp}/stories/${s.uuid}/publish`)
      for (const r of mine) if (r.result === 'saved' || r.result === 'done') r.published = true
      state.publish = state.publish.filter((u) => u !== s.uuid)
      save()
    }
  }
  return results
}
