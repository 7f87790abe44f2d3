/**
 * `stories | assets | datasources pull | push`: a Space's content as a folder of JSON files plus `manifest.json`.
 *
 *   <dir>/manifest.json               what was pulled (and from where), and per push target what is done
 *   <dir>/stories/<full path>.json    a Story (folders too): each translation's current draft, status, variants
 *   <dir>/assets/<uuid>.json          an asset's file name, type, SHA-256 and alt texts; its bytes in <uuid>.<ext>
 *   <dir>/datasources/<key>.json      a datasource's settings (secrets masked) and entries
 *
 * Pushing into another Space or server remaps every uuid: Stories are matched by full path (created when missing),
 * assets by SHA-256 (uploaded only when no asset with those bytes is there), and every Story and asset uuid in
 * content (asset, link and relation fields) is rewritten to the target's; a Story's variants go with it, matched to
 * the target's audience segment of the same key (one whose segment is missing is skipped and reported). The manifest
 * records, per target, the uuid
 * map and what is done after each item, so a push that was interrupted continues where it stopped when run again;
 * matching by path and hash means even an item written just before the interruption is not written twice.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { dirname, extname, join } from 'node:path'
import {
  type Api,
  type ArchivedDatasource,
  type ArchivedStory,
  createDatasourceFrom,
  downloadAsset,
  enc,
  localeCodes,
  MASK,
  pages,
  readDatasource,
  readStory,
  remap,
  sortStories,
  type StoryRow,
  uploadAsset,
} from './archive'

export const FOLDER_FORMAT = 'content-service-folder'
export const KINDS = ['stories', 'assets', 'datasources'] as const
export type Kind = (typeof KINDS)[number]

export interface AssetMeta {
  uuid: string
  filename: string
  content_type: string
  sha256: string
  alt: Record<string, string> | null
  /** The bytes' file, next to this one. */
  file: string
}

export interface PushState {
  /** source uuid → target uuid (Stories and assets) */
  uuids: Record<string, string>
  /** What is finished: Story and asset uuids, datasource keys. */
  done: Record<Kind, string[]>
  updated_at: string
}

export interface Manifest {
  format: typeof FOLDER_FORMAT
  version: 1
  source: { server: string; space: string } | null
  pulled: Partial<Record<Kind, { at: string; count: number }>>
  /** uuid → file (relative to the folder) */
  stories: Record<string, string>
  assets: Record<string, string>
  /** key → file */
  datasources: Record<string, string>
  /** `<server> <space>` → progress of pushes there */
  pushes: Record<string, PushState>
}

export interface Change {
  kind: Kind
  /** full path, file name or key */
  item: string
  change: 'create' | 'update' | 'upload' | 'reuse' | 'unchanged' | 'done' | 'skip'
  published?: boolean
  /** A Story's variant (`item` is `<full path> variant <segment> [<lang>]`). */
  variant?: boolean
}

export interface PushResult {
  target: string
  dry_run: boolean
  changes: Change[]
  warnings: string[]
  secrets: Record<string, string>
}

const MANIFEST = 'manifest.json'

export function readManifest(dir: string): Manifest {
  const file = join(dir, MANIFEST)
  if (!existsSync(file)) return { format: FOLDER_FORMAT, version: 1, source: null, pulled: {}, stories: {}, assets: {}, datasources: {}, pushes: {} }
  const m = JSON.parse(readFileSync(file, 'utf8')) as Manifest
  if (m?.format !== FOLDER_FORMAT) throw new Error(`${file} is not a content folder manifest`)
  return m
}

/** Written whole to a temporary file, then renamed: an interruption leaves the old or the new manifest, never half. */
export function writeManifest(dir: string, m: Manifest) {
  mkdirSync(dir, { recursive: true })
  const tmp = join(dir, `.${MANIFEST}.${process.pid}`)
  writeFileSync(tmp, `${JSON.stringify(m, null, 2)}\n`)
  renameSync(tmp, join(dir, MANIFEST))
}

const writeJson = (file: string, v: unknown) => {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, `${JSON.stringify(v, null, 2)}\n`)
}
const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')
const storyFile = (fullPath: string) => `stories/${fullPath.replace(/^\/+/, '') || 'index'}.json`

// ---- pull ----

export async function pull(api: Api, space: string, kind: Kind, dir: string, onProgress: (s: string) => void = () => {}) {
  const m = readManifest(dir)
  if (m.source && (m.source.server !== api.server || m.source.space !== space) && Object.keys(m[kind]).length) {
    // Another Space's files of this kind would mix with these: refuse rather than merge.
    throw Object.assign(new Error(`${dir} holds ${kind} of ${m.source.space} on ${m.source.server}: pull into another folder`), { usage: true })
  }
  m.source = { server: api.server, space }
  const sp = `/spaces/${enc(space)}`
  const before = new Set(Object.values(m[kind]))
  const files: Record<string, string> = {}
  let fetched = 0
  if (kind === 'stories') {
    const rows = sortStories(await pages<StoryRow>(api, `${sp}/stories`))
    for (const [i, s] of rows.entries()) {
      onProgress(`stories ${i + 1}/${rows.length}`)
      const file = storyFile(s.full_path)
      writeJson(join(dir, file), await readStory(api, space, s, 'current'))
      files[s.uuid] = file
      fetched++
    }
  } else if (kind === 'assets') {
    const rows = await pages<Omit<AssetMeta, 'file'>>(api, `${sp}/assets`)
    for (const [i, a] of rows.entries()) {
      onProgress(`assets ${i + 1}/${rows.length}`)
      const file = `assets/${a.uuid}.json`
      const bytesFile = `${a.uuid}${extname(a.filename).toLowerCase().replace(/[^.a-z0-9]/g, '')}`
      const bytesPath = join(dir, 'assets', bytesFile)
      // Bytes already here with the same hash are not downloaded again.
      if (!existsSync(bytesPath) || sha256(readFileSync(bytesPath)) !== a.sha256) {
        const bytes = await downloadAsset(api, space, a.uuid)
        mkdirSync(dirname(bytesPath), { recursive: true })
        writeFileSync(bytesPath, bytes)
        fetched++
      }
      writeJson(join(dir, file), { uuid: a.uuid, filename: a.filename, content_type: a.content_type, sha256: a.sha256, alt: a.alt, file: bytesFile } satisfies AssetMeta)
      files[a.uuid] = file
    }
  } else {
    const list = (await api.call<{ data: { key: string }[] }>('GET', `${sp}/datasources`)).data
    for (const [i, d] of list.entries()) {
      onProgress(`datasources ${i + 1}/${list.length}`)
      const file = `datasources/${d.key}.json`
      writeJson(join(dir, file), await readDatasource(api, space, d.key))
      files[d.key] = file
      fetched++
    }
  }
  // What the Space no longer has leaves the folder too.
  const now = new Set(Object.values(files))
  let removed = 0
  for (const f of before) {
    if (now.has(f)) continue
    if (kind === 'assets') {
      try {
        rmSync(join(dir, 'assets', readJson<AssetMeta>(join(dir, f)).file), { force: true })
      } catch {}
    }
    rmSync(join(dir, f), { force: true })
    removed++
  }
  m[kind] = files
  m.pulled[kind] = { at: new Date().toISOString(), count: Object.keys(files).length }
  writeManifest(dir, m)
  return { dir, kind, count: Object.keys(files).length, fetched, removed }
}

// ---- push ----

export async function push(api: Api, space: string, kind: Kind, dir: string, o: { dryRun: boolean; onProgress?: (s: string) => void }): Promise<PushResult> {
  const onProgress = o.onProgress ?? (() => {})
  const m = readManifest(dir)
  if (!m.pulled[kind]) throw Object.assign(new Error(`${dir} has no ${kind}: run ${kind} pull first`), { usage: true })
  const key = `${api.server} ${space}`
  const state: PushState = m.pushes[key] ?? { uuids: {}, done: { stories: [], assets: [], datasources: [] }, updated_at: new Date().toISOString() }
  const save = () => {
    if (o.dryRun) return
    state.updated_at = new Date().toISOString()
    m.pushes[key] = state
    writeManifest(dir, m)
  }
  const r: PushResult = { target: key, dry_run: o.dryRun, changes: [], warnings: [], secrets: {} }
  if (kind === 'assets') await pushAssets(api, space, dir, m, state, save, r, onProgress)
  else if (kind === 'datasources') await pushDatasources(api, space, dir, m, state, save, r, onProgress)
  else await pushStories(api, space, dir, m, state, save, r, onProgress)
  // Finished: the next push compares again from the start (the uuid map stays).
  state.done[kind] = []
  save()
  return r
}

async function pushAssets(api: Api, space: string, dir: string, m: Manifest, state: PushState, save: () => void, r: PushResult, onProgress: (s: string) => void) {
  const bySha = new Map((await pages<{ uuid: string; sha256: string }>(api, `/spaces/${enc(space)}/assets`)).map((x) => [x.sha256, x.uuid]))
  const live = new Set(bySha.values())
  const metas = Object.values(m.assets).map((f) => readJson<AssetMeta>(join(dir, f)))
  for (const [i, a] of metas.entries()) {
    onProgress(`assets ${i + 1}/${metas.length}`)
    const mapped = state.uuids[a.uuid]
    if (state.done.assets.includes(a.uuid) && mapped && live.has(mapped)) {
      r.changes.push({ kind: 'assets', item: a.filename, change: 'done' })
      continue
    }
    const known = bySha.get(a.sha256)
    if (known) {
      state.uuids[a.uuid] = known
      r.changes.push({ kind: 'assets', item: a.filename, change: 'reuse' })
    } else {
      r.changes.push({ kind: 'assets', item: a.filename, change: 'upload' })
      if (r.dry_run) continue
      const bytes = new Uint8Array(readFileSync(join(dir, 'assets', a.file)))
      if (sha256(bytes) !== a.sha256) throw Object.assign(new Error(`${a.file}: its bytes do not match the SHA-256 pulled (pull again)`), { usage: true })
      const uuid = await uploadAsset(api, space, a, bytes)
      state.uuids[a.uuid] = uuid
      bySha.set(a.sha256, uuid)
    }
    if (!r.dry_run) {
      state.done.assets.push(a.uuid)
      save()
    }
  }
}

async function pushDatasources(api: Api, space: string, dir: string, m: Manifest, state: PushState, save: () => void, r: PushResult, onProgress: (s: string) => void) {
  const base = `/spaces/${enc(space)}/datasources`
  const have = new Map((await api.call<{ data: ArchivedDatasource[] }>('GET', base)).data.map((d) => [d.key, d]))
  const list = Object.values(m.datasources).map((f) => readJson<ArchivedDatasource>(join(dir, f)))
  for (const [i, d] of list.entries()) {
    onProgress(`datasources ${i + 1}/${list.length}`)
    if (state.done.datasources.includes(d.key) && have.has(d.key)) {
      r.changes.push({ kind: 'datasources', item: d.key, change: 'done' })
      continue
    }
    const there = have.get(d.key)
    if (!there) {
      r.changes.push({ kind: 'datasources', item: d.key, change: 'create' })
      if (r.dry_run) continue
      const made = await createDatasourceFrom(api, space, d, r.warnings)
      if (made.secret) r.secrets[d.key] = made.secret
    } else {
      // Settings that can travel (never secrets); the entries of an existing one stay (its push secret is not known here).
      const c = d.config
      const config =
        d.type === 'webhook_push'
          ? { ...(c.allow_unsigned !== undefined ? { allow_unsigned: c.allow_unsigned } : {}), ...(c.schema ? { schema: c.schema } : {}) }
          : { ...(typeof c.url === 'string' && !c.url.includes(MASK) ? { url: c.url } : {}), json_path: c.json_path, cron: c.cron }
      const same = there.label === d.label && Object.entries(config).every(([k, v]) => JSON.stringify(there.config[k]) === JSON.stringify(v))
      r.changes.push({ kind: 'datasources', item: d.key, change: same ? 'unchanged' : 'update' })
      if (r.dry_run) continue
      if (!same) await api.call('PATCH', `${base}/${enc(d.key)}`, { label: d.label, config })
      if (d.type !== there.type) r.warnings.push(`datasource ${d.key}: is ${there.type} in ${space}, ${d.type} here; its type was left`)
    }
    state.done.datasources.push(d.key)
    save()
  }
}

async function pushStories(api: Api, space: string, dir: string, m: Manifest, state: PushState, save: () => void, r: PushResult, onProgress: (s: string) => void) {
  const sp = `/spaces/${enc(space)}`
  const stories = sortStories(Object.values(m.stories).map((f) => readJson<ArchivedStory>(join(dir, f))))
  const rows = await pages<StoryRow>(api, `${sp}/stories`)
  const byPath = new Map(rows.map((x) => [x.full_path, x]))
  const byUuid = new Map(rows.map((x) => [x.uuid, x]))

  // Asset uuids: from an assets push to this target, else by hash (the folder's asset files name it).
  const map = new Map(Object.entries(state.uuids))
  const assetsHere = await pages<{ uuid: string; sha256: string }>(api, `${sp}/assets`)
  const bySha = new Map(assetsHere.map((x) => [x.sha256, x.uuid]))
  for (const f of Object.values(m.assets)) {
    const a = readJson<AssetMeta>(join(dir, f))
    if (!map.has(a.uuid) && bySha.has(a.sha256)) map.set(a.uuid, bySha.get(a.sha256)!)
  }

  // Locales the translations need.
  const locales = new Set(localeCodes((await api.call<{ data: unknown }>('GET', `${sp}/locales`)).data))
  const needed = [...new Set(stories.flatMap((s) => [...Object.keys(s.translations), ...(s.variants ?? []).map((v) => v.lang)]))].filter((l) => !locales.has(l))
  if (needed.length) {
    r.warnings.push(`locales added to ${space}: ${needed.join(', ')}`)
    if (!r.dry_run) for (const code of needed) await api.call('POST', `${sp}/locales`, { code })
  }

  // Variants name their audience segment by key: matched by key in the target (a segment is a Space setting, not
  // pushed); a variant whose segment the target lacks is reported and skipped.
  const segments = stories.some((s) => s.variants?.length)
    ? new Map((await api.call<{ data: { id: number; key: string }[] }>('GET', `${sp}/audience-segments`)).data.map((g) => [g.key, g.id]))
    : new Map<string, number>()
  const pushVariants = async (s: ArchivedStory, uuid: string | undefined): Promise<boolean> => {
    if (!s.variants?.length) return false
    type Variant = { id: number; segment_key: string; lang: string; content: unknown }
    const have = uuid ? (await api.call<{ data: Variant[] }>('GET', `${sp}/stories/${uuid}/variants`)).data : []
    let wrote = false
    for (const v of s.variants) {
      const item = `${s.full_path} variant ${v.segment_key} [${v.lang}]`
      const segment = segments.get(v.segment_key)
      if (segment === undefined) {
        r.changes.push({ kind: 'stories', item, change: 'skip', variant: true })
        r.warnings.push(`${item}: not pushed, ${space} has no audience segment "${v.segment_key}" (create it there, then push again)`)
        continue
      }
      const content = remap(v.content, map)
      const same = have.find((x) => x.segment_key === v.segment_key && x.lang === v.lang)
      const change = !same ? 'create' : JSON.stringify(same.content) === JSON.stringify(content) ? 'unchanged' : 'update'
      r.changes.push({ kind: 'stories', item, change, variant: true })
      if (change === 'unchanged') continue
      wrote = true
      if (r.dry_run) continue
      if (same) await api.call('PATCH', `${sp}/stories/${uuid}/variants/${same.id}`, { content })
      else await api.call('POST', `${sp}/stories/${uuid}/variants`, { audience_segment_id: segment, lang: v.lang, content })
    }
    return wrote
  }

  // 1. Every Story exists there (matched by path, else created empty, parents first): all uuids known before content.
  const created = new Set<string>()
  for (const [i, s] of stories.entries()) {
    onProgress(`stories ${i + 1}/${stories.length}`)
    const mapped = state.uuids[s.uuid]
    if (mapped && byUuid.has(mapped)) continue
    const there = byPath.get(s.full_path)
    if (there) {
      map.set(s.uuid, there.uuid)
      state.uuids[s.uuid] = there.uuid
      continue
    }
    created.add(s.uuid)
    if (r.dry_run) continue
    const parent = s.parent_uuid ? map.get(s.parent_uuid) : undefined
    const made = (
      await api.call<{ data: StoryRow }>('POST', `${sp}/stories`, {
        name: s.translations[s.primary_lang]?.name ?? s.name,
        slug: s.slug,
        ...(parent ? { parent_uuid: parent } : {}),
        is_folder: s.is_folder,
        lang: s.primary_lang,
        ...(s.is_folder ? {} : { content: { type: 'doc', blocks: [] } }),
      })
    ).data
    map.set(s.uuid, made.uuid)
    state.uuids[s.uuid] = made.uuid
    byUuid.set(made.uuid, made)
    save()
  }
  for (const [k, v] of Object.entries(state.uuids)) map.set(k, v)

  // 2. Content, translation by translation (only what differs: no empty versions), then publish what was published.
  for (const [i, s] of stories.entries()) {
    onProgress(`content ${i + 1}/${stories.length}`)
    const item = s.full_path
    if (state.done.stories.includes(s.uuid) && map.has(s.uuid) && byUuid.has(map.get(s.uuid)!)) {
      r.changes.push({ kind: 'stories', item, change: 'done' })
      continue
    }
    if (created.has(s.uuid) && r.dry_run) {
      r.changes.push({ kind: 'stories', item, change: 'create', published: s.status === 'published' })
      await pushVariants(s, undefined)
      continue
    }
    const uuid = map.get(s.uuid)!
    let wrote = false
    if (!s.is_folder) {
      for (const lang of [s.primary_lang, ...Object.keys(s.translations).filter((l) => l !== s.primary_lang)]) {
        const tr = s.translations[lang]
        if (!tr) continue
        const content = remap(tr.content, map)
        const current = await api
          .call<{ data: { name: string; content: unknown; translations?: string[] } }>('GET', `${sp}/stories/${uuid}?lang=${enc(lang)}`)
          .then((x) => x.data)
          .catch(() => null)
        if (current && current.name === tr.name && JSON.stringify(current.content) === JSON.stringify(content)) continue
        wrote = true
        if (!r.dry_run) await api.call('PUT', `${sp}/stories/${uuid}`, { lang, name: tr.name, content })
      }
    }
    const story = r.changes.length
    // Variants after the content (they are validated against the blueprints), reported after their Story.
    const variantsWrote = !s.is_folder && (await pushVariants(s, uuid))
    const variantChanges = r.changes.splice(story)
    const there = byUuid.get(uuid)
    const publish = !s.is_folder && s.status === 'published' && (wrote || variantsWrote || created.has(s.uuid) || there?.status !== 'published' || !!there?.has_unpublished_changes)
    if (publish && !r.dry_run) await api.call('POST', `${sp}/stories/${uuid}/publish`)
    r.changes.push({ kind: 'stories', item, change: created.has(s.uuid) ? 'create' : wrote ? 'update' : 'unchanged', ...(publish ? { published: true } : {}) }, ...variantChanges)
    if (!r.dry_run) {
      state.done.stories.push(s.uuid)
      save()
    }
  }
}
