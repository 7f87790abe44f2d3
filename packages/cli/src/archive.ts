/**
 * `export` and `import`: one JSON archive of a Space — its locales, component blueprints, assets with their bytes
 * (base64) and alt texts, every Story (folders included, not archived ones) with the current draft of each
 * translation, whether it was published, its variants and (with `versions: 'all'`) every version, the audience
 * segments, the forms and the datasources with their entries — restorable into an empty Space on any server. Every uuid is remapped on
 * import: Stories and assets get new ones, and every string in content equal to an exported Story or asset uuid (asset
 * fields, link fields, relation fields) is rewritten to its new uuid. Assets already in the target Space with the same
 * SHA-256 are reused, not uploaded again.
 */

import type { Api } from './http'

export const ARCHIVE_FORMAT = 'content-service-space-export'
export const ARCHIVE_VERSION = 2

export type { Api } from './http'

export interface ArchivedStory {
  uuid: string
  parent_uuid: string | null
  name: string
  slug: string
  full_path: string
  is_folder: boolean
  primary_lang: string
  status: string
  /** locale → the current draft's name and content */
  translations: Record<string, { name: string; content: unknown }>
  /** Content served instead to one audience segment (by key) in one locale. */
  variants?: { segment_key: string; lang: string; content: unknown }[]
  /** With `versions: 'all'`: every version, oldest first. */
  versions?: { version_no: number; lang: string; name: string; content: unknown }[]
}

export interface ArchivedDatasource {
  key: string
  label: string
  type: 'http_json' | 'webhook_push'
  /** As the server answers it: secrets never (a push secret is made anew; masked URL parts and header values are dropped). */
  config: Record<string, unknown>
  entries: Record<string, unknown>[]
}

export interface ArchivedSegment {
  key: string
  label: string
  priority: number
  active: boolean
  rules: unknown[]
  match_all: boolean
}

export interface ArchivedAsset {
  uuid: string
  filename: string
  content_type: string
  sha256: string
  alt: Record<string, string> | null
  /** The bytes, base64. */
  data: string
}

export interface Archive {
  format: typeof ARCHIVE_FORMAT
  version: number
  exported_at: string
  source: { server: string; space: string }
  locales: string[]
  default_lang: string | null
  components: Record<string, unknown>[]
  assets: ArchivedAsset[]
  stories: ArchivedStory[]
  /** Which versions of each Story the archive holds (archive version 2 on). */
  versions?: 'all' | 'current'
  segments?: ArchivedSegment[]
  /** Form definitions as `POST /forms` takes them (no submissions, no secrets). */
  forms?: Record<string, unknown>[]
  datasources?: ArchivedDatasource[]
}

export const enc = encodeURIComponent
export const MASK = '••••'

export async function pages<T>(api: Api, path: string): Promise<T[]> {
  const out: T[] = []
  for (let page = 1; ; page++) {
    const r = await api.call<{ data: T[]; meta?: { total?: number } }>('GET', `${path}${path.includes('?') ? '&' : '?'}page=${page}&per_page=100`)
    out.push(...r.data)
    if (r.data.length < 100 || (r.meta?.total !== undefined && out.length >= r.meta.total)) return out
  }
}

export function localeCodes(data: unknown): string[] {
  return (Array.isArray(data) ? data : []).map((l) => (typeof l === 'string' ? l : (l as { code: string }).code))
}

/** Reads a whole Space into an archive. `onProgress` gets a line per step. */
export async function exportSpace(api: Api, space: string, onProgress: (s: string) => void = () => {}, opts: { versions?: 'all' | 'current' } = {}): Promise<Archive> {
  const sp = `/spaces/${enc(space)}`
  const info = (await api.call<{ data: { default_lang?: string; locales?: unknown } }>('GET', sp)).data
  const locales = localeCodes((await api.call<{ data: unknown }>('GET', `${sp}/locales`)).data)
  const components = (await api.call<{ data: Record<string, unknown>[] }>('GET', `${sp}/components`)).data.map((c) => {
    const { id: _i, created_at: _c, updated_at: _u, ...rest } = c
    return rest
  })
  const assetRows = await pages<{ uuid: string; filename: string; content_type: string; sha256: string; alt: Record<string, string> | null }>(api, `${sp}/assets`)
  const assets: ArchivedAsset[] = []
  for (const [i, a] of assetRows.entries()) {
    onProgress(`assets ${i + 1}/${assetRows.length}`)
    const bytes = await downloadAsset(api, space, a.uuid)
    assets.push({ uuid: a.uuid, filename: a.filename, content_type: a.content_type, sha256: a.sha256, alt: a.alt, data: Buffer.from(bytes).toString('base64') })
  }
  const rows = await pages<StoryRow>(api, `${sp}/stories`)
  const stories: ArchivedStory[] = []
  for (const [i, s] of rows.entries()) {
    onProgress(`stories ${i + 1}/${rows.length}`)
    stories.push(await readStory(api, space, s, opts.versions ?? 'current'))
  }
  onProgress('segments, forms, datasources')
  const segments = await readSegments(api, space)
  const forms = (await api.call<{ data: Record<string, unknown>[] }>('GET', `${sp}/forms`)).data.map(formBody)
  const datasources: ArchivedDatasource[] = []
  for (const d of (await api.call<{ data: { key: string }[] }>('GET', `${sp}/datasources`)).data) datasources.push(await readDatasource(api, space, d.key))
  return {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    exported_at: new Date().toISOString(),
    source: { server: api.server, space },
    locales,
    default_lang: info.default_lang ?? null,
    components,
    assets,
    stories: sortStories(stories),
    versions: opts.versions ?? 'current',
    segments,
    forms,
    datasources,
  }
}

export interface StoryRow {
  uuid: string
  parent_uuid: string | null
  name: string
  slug: string
  full_path: string
  is_folder: boolean
  primary_lang: string
  status: string
  has_unpublished_changes?: boolean
  translations: string[]
}

export const sortStories = <T extends { full_path: string }>(list: T[]) => list.sort((a, b) => depth(a.full_path) - depth(b.full_path) || (a.full_path < b.full_path ? -1 : 1))

/** One Story as archived: each translation's current draft, its variants, and with `all` every version. */
export async function readStory(api: Api, space: string, s: StoryRow, versions: 'all' | 'current'): Promise<ArchivedStory> {
  const sp = `/spaces/${enc(space)}`
  const translations: ArchivedStory['translations'] = {}
  for (const lang of s.translations) {
    const v = (await api.call<{ data: { name: string; content: unknown } }>('GET', `${sp}/stories/${s.uuid}?lang=${enc(lang)}`)).data
    translations[lang] = { name: v.name, content: v.content }
  }
  const out: ArchivedStory = { uuid: s.uuid, parent_uuid: s.parent_uuid, name: s.name, slug: s.slug, full_path: s.full_path, is_folder: s.is_folder, primary_lang: s.primary_lang, status: s.status, translations }
  if (s.is_folder) return out
  const variants = (await api.call<{ data: { segment_key: string; lang: string; content: unknown }[] }>('GET', `${sp}/stories/${s.uuid}/variants`)).data
  if (variants.length) out.variants = variants.map((v) => ({ segment_key: v.segment_key, lang: v.lang, content: v.content }))
  if (versions === 'all') {
    const list = await pages<{ version_no: number }>(api, `${sp}/stories/${s.uuid}/versions`)
    out.versions = []
    for (const v of list.sort((a, b) => a.version_no - b.version_no)) {
      const full = (await api.call<{ data: { version_no: number; lang: string; name: string; content: unknown } }>('GET', `${sp}/stories/${s.uuid}/versions/${v.version_no}`)).data
      out.versions.push({ version_no: full.version_no, lang: full.lang, name: full.name, content: full.content })
    }
  }
  return out
}

export async function readSegments(api: Api, space: string): Promise<ArchivedSegment[]> {
  const list = (await api.call<{ data: ArchivedSegment[] }>('GET', `/spaces/${enc(space)}/audience-segments`)).data
  return list.map((g) => ({ key: g.key, label: g.label, priority: g.priority, active: g.active, rules: g.rules, match_all: g.match_all }))
}

const FORM_FIELDS = ['slug', 'label', 'fields', 'submit_action', 'notification_email', 'webhook_url', 'redirect_url', 'success_message', 'rate_limit_per_ip', 'spam_provider']
/** A form as `POST /forms` takes it: no uuid, secrets or timestamps. */
export const formBody = (f: Record<string, unknown>) => Object.fromEntries(FORM_FIELDS.filter((k) => f[k] !== undefined).map((k) => [k, f[k]]))

/** A datasource's settings (as answered: secrets masked) and all its entries. */
export async function readDatasource(api: Api, space: string, key: string): Promise<ArchivedDatasource> {
  const base = `/spaces/${enc(space)}/datasources/${enc(key)}`
  const d = (await api.call<{ data: ArchivedDatasource & { config: Record<string, unknown> } }>('GET', base)).data
  const entries = await pages<Record<string, unknown>>(api, `${base}/entries`)
  return { key: d.key, label: d.label, type: d.type, config: d.config, entries }
}

const depth = (p: string) => p.split('/').filter(Boolean).length

/** Every string equal to a key of `map` replaced by its value, anywhere in the value. */
export function remap(value: unknown, map: Map<string, string>): unknown {
  if (typeof value === 'string') return map.get(value) ?? value
  if (Array.isArray(value)) return value.map((v) => remap(v, map))
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, remap(v, map)]))
  return value
}

export interface ImportResult {
  components: number
  assets: { uploaded: number; reused: number }
  stories: number
  published: number
  versions: number
  variants: number
  segments: number
  forms: number
  datasources: number
  /** What could not be carried as it was (masked secrets, new push secrets), one line each. */
  warnings: string[]
  /** Push secrets made for webhook_push datasources (shown once): key → secret. */
  secrets: Record<string, string>
  /** old uuid → new uuid (Stories and assets) */
  uuids: Record<string, string>
  /** This run continued an interrupted import. */
  resumed?: boolean
  /** Stories an interrupted run had finished (not written again). */
  already_done?: number
}

export function readArchive(text: string): Archive {
  let a: Archive
  try {
    a = JSON.parse(text)
  } catch (err) {
    throw new Error(`not an export archive: ${(err as Error).message}`)
  }
  if (a?.format !== ARCHIVE_FORMAT) throw new Error('not an export archive (format)')
  if (a.version > ARCHIVE_VERSION) throw new Error(`archive version ${a.version} is newer than this CLI knows (${ARCHIVE_VERSION})`)
  return a
}

/** Uploads an asset (bytes and alt texts); answers its new uuid. */
export async function uploadAsset(api: Api, space: string, asset: { filename: string; content_type: string; alt: Record<string, string> | null }, bytes: Uint8Array): Promise<string> {
  const fd = new FormData()
  if (asset.alt && Object.keys(asset.alt).length) fd.append('alt', JSON.stringify(asset.alt))
  fd.append('file', new Blob([bytes as BlobPart], { type: asset.content_type }), asset.filename)
  return (await api.call<{ data: { uuid: string } }>('POST', `/spaces/${enc(space)}/assets`, fd, { raw: true })).data.uuid
}

/** An asset's bytes, read through the public delivery route with the token. */
export async function downloadAsset(api: Api, space: string, uuid: string): Promise<Uint8Array> {
  return api.call<Uint8Array>('GET', `/cdn/${enc(space)}/assets/${uuid}`, undefined, { bytes: true, headers: { Accept: '*/*' } })
}

/**
 * Creates a datasource from its archived form and restores its entries. Secrets cannot travel (the server answers them
 * masked): a webhook_push datasource gets a new push secret (returned, shown once) and its entries are pushed signed
 * with it; an http_json datasource keeps its URL when nothing in it was masked (else it is not created) and loses its
 * masked header values (named in the warnings); its entries come from its next pull.
 */
export async function createDatasourceFrom(api: Api, space: string, d: ArchivedDatasource, warnings: string[]): Promise<{ created: boolean; secret?: string }> {
  const base = `/spaces/${enc(space)}/datasources`
  const c = d.config
  let config: Record<string, unknown>
  if (d.type === 'webhook_push') {
    config = { secret_hash: 'auto', ...(c.allow_unsigned !== undefined ? { allow_unsigned: c.allow_unsigned } : {}), ...(c.schema ? { schema: c.schema } : {}) }
  } else {
    if (typeof c.url === 'string' && c.url.includes(MASK)) {
      warnings.push(`datasource ${d.key}: its URL holds secret parts the server shows masked; create it by hand`)
      return { created: false }
    }
    const headers = (c.headers ?? {}) as Record<string, string>
    const masked = Object.keys(headers).filter((h) => headers[h] === MASK)
    if (masked.length) warnings.push(`datasource ${d.key}: set the header values of ${masked.join(', ')} again (they are never shown)`)
    config = { url: c.url, json_path: c.json_path, cron: c.cron, headers: Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== MASK)) }
  }
  const made = (await api.call<{ data: { webhook_secret?: string } }>('POST', base, { key: d.key, label: d.label, type: d.type, config })).data
  if (d.type === 'webhook_push') {
    if (d.entries.length) await pushEntries(api, space, d.key, d.entries, made.webhook_secret ?? null)
    warnings.push(`datasource ${d.key}: a new push secret was made (the old one cannot be read): give it to whatever pushes to it`)
  } else if (d.entries.length) warnings.push(`datasource ${d.key}: its ${d.entries.length} entries come back with its next pull (POST …/sync or its cron)`)
  return { created: true, secret: made.webhook_secret }
}

/** Replaces a webhook_push datasource's entries through its signed push (HMAC-SHA256 of `<timestamp>.<body>`). */
export async function pushEntries(api: Api, space: string, key: string, entries: unknown[], secret: string | null) {
  const { createHmac } = await import('node:crypto')
  const body = JSON.stringify(entries)
  const ts = String(Math.floor(Date.now() / 1000))
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-Service-Timestamp': ts }
  if (secret) headers['X-Service-Signature'] = `sha256=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`
  await api.call('POST', `/spaces/${enc(space)}/datasources/${enc(key)}/webhook`, body, { raw: true, headers })
}

/**
 * The progress of an import into one Space, kept in a state file (next to the archive unless `--state` says where)
 * after each item, so an interrupted import run again continues where it stopped: the uuid map, and what is done.
 * Steps that could have reached the server before the interruption without being recorded are matched on the re-run
 * (Stories by full path, assets by SHA-256, segments, forms and datasources by key, variants by segment and locale,
 * replayed versions by count): nothing is written twice.
 */
export interface ImportState {
  started_at: string
  updated_at: string
  finished_at?: string
  /** old uuid → new uuid (Stories and assets) */
  uuids: Record<string, string>
  done: { setup: boolean; segments: string[]; datasources: string[]; forms: string[]; assets: string[]; stories: string[] }
  /** Datasources whose create was sent (it may have reached the server without its answer). */
  datasources_started: string[]
  /** webhook_push datasources made whose new push secret was not shown yet (a secret is never written to disk). */
  secrets_pending: string[]
  warnings: string[]
}

export const newImportState = (): ImportState => ({
  started_at: new Date().toISOString(),
  updated_at: new Date().toISOString(),
  uuids: {},
  done: { setup: false, segments: [], datasources: [], forms: [], assets: [], stories: [] },
  datasources_started: [],
  secrets_pending: [],
  warnings: [],
})

const started = (s: ImportState) => s.done.setup || Object.keys(s.uuids).length > 0

/** What stands in the way of a fresh import: Stories, and segments, forms or datasources the archive would replace. */
export async function inTheWay(api: Api, space: string, a: Archive): Promise<string[]> {
  const sp = `/spaces/${enc(space)}`
  const out: string[] = []
  const stories = await pages<{ full_path: string }>(api, `${sp}/stories`)
  if (stories.length) out.push(`${stories.length} Stories (${stories.slice(0, 3).map((s) => s.full_path).join(', ')}${stories.length > 3 ? ', …' : ''})`)
  const clash = (what: string, have: string[], mine: string[]) => {
    const both = mine.filter((k) => have.includes(k))
    if (both.length) out.push(`${what} ${both.join(', ')}`)
  }
  const keys = async (path: string, k: string) => (await api.call<{ data: Record<string, string>[] }>('GET', `${sp}/${path}`)).data.map((x) => x[k])
  clash('the segments', await keys('audience-segments', 'key'), (a.segments ?? []).map((g) => g.key))
  clash('the forms', await keys('forms', 'slug'), (a.forms ?? []).map((f) => String(f.slug)))
  clash('the datasources', await keys('datasources', 'key'), (a.datasources ?? []).map((d) => d.key))
  return out
}

/**
 * Restores an archive into a Space that holds none of it yet (blueprints and assets may exist: they are updated and
 * reused), or continues the import `state` records. `save` is called with the state after each item.
 */
export async function importSpace(
  api: Api,
  space: string,
  a: Archive,
  onProgress: (s: string) => void = () => {},
  opts: { state?: ImportState; save?: (s: ImportState) => void } = {},
): Promise<ImportResult> {
  const sp = `/spaces/${enc(space)}`
  const state = opts.state && !opts.state.finished_at ? opts.state : newImportState()
  const resumed = started(state)
  const save = () => {
    state.updated_at = new Date().toISOString()
    opts.save?.(state)
  }
  if (!resumed) {
    const blocking = await inTheWay(api, space, a)
    if (blocking.length)
      throw Object.assign(new Error(`the Space ${space} is not empty: it already has ${blocking.join('; ')}. import needs an empty Space (an interrupted import continues from its state file)`), { refused: true })
  }
  const warnings = state.warnings
  const warn = (w: string) => {
    if (!warnings.includes(w)) warnings.push(w)
  }
  const secrets: Record<string, string> = {}

  if (!state.done.setup) {
    // Locales first (asset alt texts and translations need them).
    const have = new Set(localeCodes((await api.call<{ data: unknown }>('GET', `${sp}/locales`)).data))
    for (const code of a.locales) if (!have.has(code)) await api.call('POST', `${sp}/locales`, { code })
    if (a.default_lang) await api.call('PATCH', sp, { default_lang: a.default_lang }).catch(() => {})

    // Blueprints: created without blocks whitelists, then completed (a whitelist may name one created later).
    const current = new Set((await api.call<{ data: { name: string }[] }>('GET', `${sp}/components`)).data.map((c) => c.name))
    const strip = (c: Record<string, unknown>) => ({
      ...c,
      schema: Object.fromEntries(Object.entries((c.schema ?? {}) as Record<string, Record<string, unknown>>).map(([k, f]) => [k, f.type === 'blocks' ? { ...f, component_whitelist: undefined } : f])),
    })
    for (const c of a.components) {
      const name = String(c.name)
      if (current.has(name)) await api.call('PUT', `${sp}/components/${enc(name)}`, strip(c))
      else await api.call('POST', `${sp}/components`, strip(c))
    }
    for (const c of a.components) await api.call('PUT', `${sp}/components/${enc(String(c.name))}`, c)
    state.done.setup = true
    save()
  }

  // Audience segments (variants name them), by key: an existing one is replaced.
  const haveSegments = new Map((await api.call<{ data: { id: number; key: string }[] }>('GET', `${sp}/audience-segments`)).data.map((g) => [g.key, g.id]))
  const segmentIds = new Map<string, number>()
  for (const g of a.segments ?? []) {
    if (state.done.segments.includes(g.key) && haveSegments.has(g.key)) {
      segmentIds.set(g.key, haveSegments.get(g.key)!)
      continue
    }
    const saved = haveSegments.has(g.key)
      ? await api.call<{ data: { id: number } }>('PUT', `${sp}/audience-segments/${enc(g.key)}`, g)
      : await api.call<{ data: { id: number } }>('POST', `${sp}/audience-segments`, g)
    segmentIds.set(g.key, saved.data.id)
    state.done.segments.push(g.key)
    save()
  }

  // Datasources (Stories' markers read them) and forms.
  const haveDs = new Set((await api.call<{ data: { key: string }[] }>('GET', `${sp}/datasources`)).data.map((d) => d.key))
  let datasources = 0
  for (const d of a.datasources ?? []) {
    if (state.done.datasources.includes(d.key)) continue
    onProgress(`datasource ${d.key}`)
    if (haveDs.has(d.key)) {
      if (!state.datasources_started.includes(d.key)) {
        warn(`datasource ${d.key}: exists in ${space} already, left as it is`)
      } else if (d.type === 'webhook_push') {
        // Made by the interrupted run (its answer, with the push secret, may be lost): a new secret, the entries again.
        const secret = (await api.call<{ data: { webhook_secret?: string } }>('POST', `${sp}/datasources/${enc(d.key)}/rotate-secret`)).data.webhook_secret ?? null
        if (d.entries.length) await pushEntries(api, space, d.key, d.entries, secret)
        if (secret) secrets[d.key] = secret
        if (!state.secrets_pending.includes(d.key)) state.secrets_pending.push(d.key)
        warn(`datasource ${d.key}: a new push secret was made (the old one cannot be read): give it to whatever pushes to it`)
        datasources++
      } else datasources++
    } else {
      state.datasources_started.push(d.key)
      save()
      const r = await createDatasourceFrom(api, space, d, warnings)
      if (r.secret) {
        secrets[d.key] = r.secret
        state.secrets_pending.push(d.key)
      }
      if (r.created) datasources++
    }
    state.done.datasources.push(d.key)
    save()
  }
  const haveForms = new Map((await api.call<{ data: { uuid: string; slug: string }[] }>('GET', `${sp}/forms`)).data.map((f) => [f.slug, f.uuid]))
  for (const f of a.forms ?? []) {
    const slug = String(f.slug)
    if (state.done.forms.includes(slug) && haveForms.has(slug)) continue
    const uuid = haveForms.get(slug)
    if (uuid) await api.call('PUT', `${sp}/forms/${uuid}`, f)
    else await api.call('POST', `${sp}/forms`, f)
    if (f.spam_provider) warn(`form ${f.slug}: set its ${f.spam_provider} secret again (it is never shown)`)
    state.done.forms.push(slug)
    save()
  }

  // Assets: deduplicated by SHA-256 against the target Space (an upload whose answer was lost is found by its hash).
  const map = new Map<string, string>(Object.entries(state.uuids))
  const bySha = new Map((await pages<{ uuid: string; sha256: string }>(api, `${sp}/assets`)).map((x) => [x.sha256, x.uuid]))
  let uploaded = 0
  let reused = 0
  for (const [i, asset] of a.assets.entries()) {
    onProgress(`assets ${i + 1}/${a.assets.length}`)
    const known = bySha.get(asset.sha256)
    if (known) {
      if (!state.done.assets.includes(asset.uuid)) reused++
    } else {
      const uuid = await uploadAsset(api, space, asset, Buffer.from(asset.data, 'base64'))
      bySha.set(asset.sha256, uuid)
      uploaded++
    }
    map.set(asset.uuid, bySha.get(asset.sha256)!)
    state.uuids[asset.uuid] = bySha.get(asset.sha256)!
    if (!state.done.assets.includes(asset.uuid)) state.done.assets.push(asset.uuid)
    save()
  }

  // Stories: created parents first with empty content, so every uuid is known before any content is written. A Story
  // the interrupted run created (recorded, or found by its path) is not created again.
  const rows = await pages<StoryRow>(api, `${sp}/stories`)
  const byPath = new Map(rows.map((x) => [x.full_path, x.uuid]))
  const live = new Set(rows.map((x) => x.uuid))
  const empty = { type: 'doc', blocks: [] }
  for (const [i, s] of a.stories.entries()) {
    onProgress(`stories ${i + 1}/${a.stories.length}`)
    const mapped = state.uuids[s.uuid]
    if (mapped && live.has(mapped)) continue
    let uuid = byPath.get(s.full_path)
    if (!uuid) {
      const primary = s.translations[s.primary_lang]
      uuid = (
        await api.call<{ data: { uuid: string } }>('POST', `${sp}/stories`, {
          name: primary?.name ?? s.name,
          slug: s.slug,
          parent_uuid: s.parent_uuid ? map.get(s.parent_uuid) : undefined,
          is_folder: s.is_folder,
          lang: s.primary_lang,
          ...(s.is_folder ? {} : { content: empty }),
        })
      ).data.uuid
      live.add(uuid)
    }
    map.set(s.uuid, uuid)
    state.uuids[s.uuid] = uuid
    save()
  }
  let published = 0
  let versions = 0
  let variants = 0
  let skipped = 0
  for (const [i, s] of a.stories.entries()) {
    if (s.is_folder) continue
    if (state.done.stories.includes(s.uuid)) {
      skipped++
      continue
    }
    onProgress(`content ${i + 1}/${a.stories.length}`)
    const uuid = map.get(s.uuid)!
    // The history first (each version saved again, oldest first: versions already there beyond the one the Story was
    // created with were replayed by an interrupted run), then each translation's current draft when it differs.
    const list = s.versions ?? []
    const there = (await api.call<{ meta?: { total?: number }; data: unknown[] }>('GET', `${sp}/stories/${uuid}/versions?per_page=1`)).meta?.total ?? 1
    for (const v of list.slice(Math.max(0, there - 1))) {
      await api.call('PUT', `${sp}/stories/${uuid}`, { lang: v.lang, name: v.name, content: remap(v.content, map) })
      versions++
    }
    const langs = [s.primary_lang, ...Object.keys(s.translations).filter((l) => l !== s.primary_lang)]
    for (const lang of langs) {
      const tr = s.translations[lang]
      if (!tr) continue
      const content = remap(tr.content, map)
      // No translation in that locale yet: 404.
      const current = await api
        .call<{ data: { name: string; content: unknown } }>('GET', `${sp}/stories/${uuid}?lang=${enc(lang)}`)
        .then((x) => x.data)
        .catch((err) => {
          if ((err as { status?: number }).status === 404) return null
          throw err
        })
      if (current && current.name === tr.name && JSON.stringify(current.content) === JSON.stringify(content)) continue
      await api.call('PUT', `${sp}/stories/${uuid}`, { lang, name: tr.name, content })
    }
    if (s.variants?.length) {
      const haveVariants = (await api.call<{ data: { id: number; segment_key: string; lang: string; content: unknown }[] }>('GET', `${sp}/stories/${uuid}/variants`)).data
      for (const v of s.variants) {
        const segment = segmentIds.get(v.segment_key)
        if (segment === undefined) {
          warn(`${s.full_path}: a variant for the segment ${v.segment_key}, which the archive does not hold, was left out`)
          continue
        }
        const content = remap(v.content, map)
        const same = haveVariants.find((x) => x.segment_key === v.segment_key && x.lang === v.lang)
        if (same && JSON.stringify(same.content) === JSON.stringify(content)) continue
        if (same) await api.call('PATCH', `${sp}/stories/${uuid}/variants/${same.id}`, { content })
        else await api.call('POST', `${sp}/stories/${uuid}/variants`, { audience_segment_id: segment, lang: v.lang, content })
        variants++
      }
    }
    if (s.status === 'published') {
      await api.call('POST', `${sp}/stories/${uuid}/publish`)
      published++
    }
    state.done.stories.push(s.uuid)
    save()
  }
  // Push secrets made by an interrupted run were never shown (and never stored): made anew, shown now.
  for (const key of state.secrets_pending) {
    if (secrets[key]) continue
    const secret = (await api.call<{ data: { webhook_secret?: string } }>('POST', `${sp}/datasources/${enc(key)}/rotate-secret`)).data.webhook_secret
    if (secret) secrets[key] = secret
  }
  state.secrets_pending = []
  state.finished_at = new Date().toISOString()
  save()
  return {
    components: a.components.length,
    assets: { uploaded, reused },
    stories: a.stories.length,
    published,
    versions,
    variants,
    segments: a.segments?.length ?? 0,
    forms: a.forms?.length ?? 0,
    datasources,
    warnings,
    secrets,
    uuids: Object.fromEntries(map),
    resumed,
    ...(resumed ? { already_done: skipped } : {}),
  }
}
