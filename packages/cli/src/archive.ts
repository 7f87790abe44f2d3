/**
 * `export` and `import`: one JSON archive of a Space — its locales, component blueprints, assets with their bytes
 * (base64) and alt texts, and every Story (folders included, not archived ones) with the current draft of each
 * translation and whether it was published — restorable into an empty Space on any server. Every uuid is remapped on
 * import: Stories and assets get new ones, and every string in content equal to an exported Story or asset uuid (asset
 * fields, link fields, relation fields) is rewritten to its new uuid. Assets already in the target Space with the same
 * SHA-256 are reused, not uploaded again.
 */

export const ARCHIVE_FORMAT = 'content-service-space-export'
export const ARCHIVE_VERSION = 1

export interface Api {
  server: string
  token: string | null
  call<T = any>(method: string, path: string, body?: unknown): Promise<T>
}

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
}

const enc = encodeURIComponent

async function pages<T>(api: Api, path: string): Promise<T[]> {
  const out: T[] = []
  for (let page = 1; ; page++) {
    const r = await api.call<{ data: T[]; meta?: { total?: number } }>('GET', `${path}${path.includes('?') ? '&' : '?'}page=${page}&per_page=100`)
    out.push(...r.data)
    if (r.data.length < 100 || (r.meta?.total !== undefined && out.length >= r.meta.total)) return out
  }
}

function localeCodes(data: unknown): string[] {
  return (Array.isArray(data) ? data : []).map((l) => (typeof l === 'string' ? l : (l as { code: string }).code))
}

/** Reads a whole Space into an archive. `onProgress` gets a line per step. */
export async function exportSpace(api: Api, space: string, onProgress: (s: string) => void = () => {}): Promise<Archive> {
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
    const res = await fetch(`${api.server}/v1/cdn/${enc(space)}/assets/${a.uuid}`, { headers: api.token ? { Authorization: `Bearer ${api.token}` } : {} })
    if (!res.ok) throw new Error(`asset ${a.uuid}: ${res.status}`)
    const bytes = new Uint8Array(await res.arrayBuffer())
    assets.push({ uuid: a.uuid, filename: a.filename, content_type: a.content_type, sha256: a.sha256, alt: a.alt, data: Buffer.from(bytes).toString('base64') })
  }
  const rows = await pages<{ uuid: string; parent_uuid: string | null; name: string; slug: string; full_path: string; is_folder: boolean; primary_lang: string; status: string; translations: string[] }>(
    api,
    `${sp}/stories`,
  )
  const stories: ArchivedStory[] = []
  for (const [i, s] of rows.entries()) {
    onProgress(`stories ${i + 1}/${rows.length}`)
    const translations: ArchivedStory['translations'] = {}
    for (const lang of s.translations) {
      const v = (await api.call<{ data: { name: string; content: unknown } }>('GET', `${sp}/stories/${s.uuid}?lang=${enc(lang)}`)).data
      translations[lang] = { name: v.name, content: v.content }
    }
    stories.push({ uuid: s.uuid, parent_uuid: s.parent_uuid, name: s.name, slug: s.slug, full_path: s.full_path, is_folder: s.is_folder, primary_lang: s.primary_lang, status: s.status, translations })
  }
  return {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    exported_at: new Date().toISOString(),
    source: { server: api.server, space },
    locales,
    default_lang: info.default_lang ?? null,
    components,
    assets,
    stories: stories.sort((a, b) => depth(a.full_path) - depth(b.full_path) || (a.full_path < b.full_path ? -1 : 1)),
  }
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
  /** old uuid → new uuid (Stories and assets) */
  uuids: Record<string, string>
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

/** Restores an archive into a Space that has no Stories yet (blueprints and assets may exist: they are reused). */
export async function importSpace(api: Api, space: string, a: Archive, onProgress: (s: string) => void = () => {}): Promise<ImportResult> {
  const sp = `/spaces/${enc(space)}`
  const existing = await pages<{ uuid: string }>(api, `${sp}/stories`)
  if (existing.length) throw Object.assign(new Error(`the Space ${space} already has ${existing.length} Stories: import needs an empty Space`), { refused: true })

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

  // Assets: deduplicated by SHA-256 against the target Space.
  const map = new Map<string, string>()
  const bySha = new Map((await pages<{ uuid: string; sha256: string }>(api, `${sp}/assets`)).map((x) => [x.sha256, x.uuid]))
  let uploaded = 0
  let reused = 0
  for (const [i, asset] of a.assets.entries()) {
    onProgress(`assets ${i + 1}/${a.assets.length}`)
    const known = bySha.get(asset.sha256)
    if (known) {
      map.set(asset.uuid, known)
      reused++
      continue
    }
    const fd = new FormData()
    if (asset.alt && Object.keys(asset.alt).length) fd.append('alt', JSON.stringify(asset.alt))
    fd.append('file', new Blob([Buffer.from(asset.data, 'base64')], { type: asset.content_type }), asset.filename)
    const res = await fetch(`${api.server}/v1${sp}/assets`, { method: 'POST', body: fd, headers: api.token ? { Authorization: `Bearer ${api.token}` } : {} })
    const body = (await res.json().catch(() => null)) as { data?: { uuid: string }; message?: string } | null
    if (!res.ok || !body?.data) throw new Error(`asset ${asset.filename}: ${res.status} ${body?.message ?? ''}`)
    map.set(asset.uuid, body.data.uuid)
    bySha.set(asset.sha256, body.data.uuid)
    uploaded++
  }

  // Stories: created parents first with empty content, so every uuid is known before any content is written.
  const empty = { type: 'doc', blocks: [] }
  for (const [i, s] of a.stories.entries()) {
    onProgress(`stories ${i + 1}/${a.stories.length}`)
    const primary = s.translations[s.primary_lang]
    const created = (
      await api.call<{ data: { uuid: string } }>('POST', `${sp}/stories`, {
        name: primary?.name ?? s.name,
        slug: s.slug,
        parent_uuid: s.parent_uuid ? map.get(s.parent_uuid) : undefined,
        is_folder: s.is_folder,
        lang: s.primary_lang,
        ...(s.is_folder ? {} : { content: empty }),
      })
    ).data
    map.set(s.uuid, created.uuid)
  }
  let published = 0
  for (const s of a.stories) {
    if (s.is_folder) continue
    const uuid = map.get(s.uuid)!
    const langs = [s.primary_lang, ...Object.keys(s.translations).filter((l) => l !== s.primary_lang)]
    for (const lang of langs) {
      const tr = s.translations[lang]
      if (tr) await api.call('PUT', `${sp}/stories/${uuid}`, { lang, name: tr.name, content: remap(tr.content, map) })
    }
    if (s.status === 'published') {
      await api.call('POST', `${sp}/stories/${uuid}/publish`)
      published++
    }
  }
  return { components: a.components.length, assets: { uploaded, reused }, stories: a.stories.length, published, uuids: Object.fromEntries(map) }
}
