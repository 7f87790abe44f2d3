import { ScopedCache } from '../../kernel/cache'
import { AppError, notFound, validationFailed } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import { requireDraftReader } from '../../kernel/preview'
import type { ReadRequest } from '../../kernel/read'
import type { PublicSpace } from '../spaces/public'
import { BLUEPRINT_NAME } from './blocks'
import { changesSince, contentVersion } from './changes'
import { pathPrefixOf, publicPathToFullPath } from './paths'
import { etagOf, publicHeaders, type Served, type StoryReadPipeline } from './read-pipeline'
import * as repo from './repo'

/**
 * The public list (`GET /cdn/{space}/stories`), the change feed (`GET /cdn/{space}/changes`) and link and relation
 * resolution (`resolve_links`, `resolve_relations`, on the list and the single read).
 *
 * Every Story of a list is read through the public read pipeline — the same cache, locale chain, read steps (segment,
 * datasource markers, assets) and bodies as `GET /cdn/{space}/stories/{path}` — and the answer is made of those cached
 * bodies' bytes: a page costs one indexed query for its paths (itself cached per Space until the next change) and no
 * JSON work unless a parameter rewrites content. Answers carry the single read's headers (strong ETag, 304, the same
 * Cache-Control and Vary: `publicHeaders`).
 */

export const LIST_PER_PAGE = { def: 25, max: 100 }
export const CHANGES_PER_PAGE = { def: 100, max: 1000 }
/** Stories a read resolves into `rels` (`resolve_relations`); the uuids past it are listed in `meta.rel_uuids`. */
export const MAX_RELS = 50
const MAX_LIST_ITEMS = 100
const MAX_RELATION_SPECS = 20
const FIELD_NAME = /^[a-z][a-z0-9_]{0,63}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const SORTS = [
  'full_path:asc',
  'full_path:desc',
  'name:asc',
  'name:desc',
  'published_at:asc',
  'published_at:desc',
  'first_published_at:asc',
  'first_published_at:desc',
] as const
export type ListSort = (typeof SORTS)[number]
export const LIST_SORTS: readonly ListSort[] = SORTS

/** The query of the list, as the route validated it (strings; the rules of each are checked here). */
export interface ListQuery {
  starts_with?: string
  by_uuids?: string
  by_paths?: string
  lang?: string
  sort_by?: ListSort
  per_page?: number
  cursor?: string
  excluding_fields?: string
  content_type?: string
  is_folder?: 'true' | 'false'
  version?: 'published' | 'draft'
  resolve_links?: 'story'
  resolve_relations?: string
}

/** The options of a read that rewrite or add to its content: `excluding_fields`, `resolve_links`, `resolve_relations`. */
export interface ReadOptions {
  excluding?: Set<string>
  resolveLinks: boolean
  /** `component.field` pairs whose values hold Story uuids. */
  relations: Map<string, Set<string>> | null
}

/** A public answer made here (not a cached render): its bytes and headers. */
export interface Composed {
  bytes: Uint8Array
  etag: string
  headers: Record<string, string>
  notModifiedHeaders: Record<string, string>
}

interface PageOfPaths {
  paths: string[]
  next: string | null
}

const encoder = new TextEncoder()
const splitList = (s: string | undefined) => (s === undefined ? null : s.split(',').map((x) => x.trim()).filter(Boolean))

/** `excluding_fields`, `resolve_links`, `resolve_relations` of a query, checked (422 naming the parameter). */
export function readOptionsOf(q: { excluding_fields?: string; resolve_links?: string; resolve_relations?: string }): ReadOptions {
  const excluding = splitList(q.excluding_fields)
  if (excluding && (excluding.length > 200 || !excluding.every((f) => FIELD_NAME.test(f)))) {
    throw validationFailed({ excluding_fields: ['must be a comma-separated list of field names (at most 200)'] })
  }
  let relations: Map<string, Set<string>> | null = null
  const specs = splitList(q.resolve_relations)
  if (specs) {
    if (specs.length > MAX_RELATION_SPECS) throw validationFailed({ resolve_relations: [`names at most ${MAX_RELATION_SPECS} component.field pairs`] })
    relations = new Map()
    for (const spec of specs) {
      const [component, field, extra] = spec.split('.')
      if (extra !== undefined || !component || !field || !BLUEPRINT_NAME.test(component) || !FIELD_NAME.test(field)) {
        throw validationFailed({ resolve_relations: [`"${spec.slice(0, 80)}" is not a component.field pair`] })
      }
      const set = relations.get(component) ?? new Set()
      set.add(field)
      relations.set(component, set)
    }
  }
  return { excluding: excluding?.length ? new Set(excluding) : undefined, resolveLinks: q.resolve_links === 'story', relations }
}

/** Whether a read needs more than its cached body. */
export const rewrites = (o: ReadOptions) => o.excluding !== undefined || o.resolveLinks || o.relations !== null

// ---- cursors ----

/** The list cursor: the sort and the last row's (key, path), opaque to clients (base64url JSON). */
function encodeCursor(sort: ListSort, mode: string, key: string | null, path: string): string {
  return Buffer.from(JSON.stringify([sort, mode, key, path])).toString('base64url')
}

function decodeCursor(cursor: string, sort: ListSort, mode: string): { key: string | null; path: string } {
  const bad = (why: string) => validationFailed({ cursor: [why] })
  if (!/^[A-Za-z0-9_-]{1,4096}$/.test(cursor)) throw bad('is not a cursor of this list')
  let v: unknown
  try {
    v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    throw bad('is not a cursor of this list')
  }
  if (!Array.isArray(v) || v.length !== 4 || typeof v[3] !== 'string' || !(v[2] === null || typeof v[2] === 'string')) throw bad('is not a cursor of this list')
  if (v[0] !== sort || v[1] !== mode) throw bad('belongs to another sort_by or version: start again without it')
  const [, , key, path] = v as [string, string, string | null, string]
  if (path.length > 1300 || (key !== null && key.length > 400)) throw bad('is not a cursor of this list')
  if (sort.startsWith('full_path') ? key !== null : key === null) throw bad('is not a cursor of this list')
  // Timestamps are compared by Postgres: anything else would be refused by it (a 422 here, never a 500 there).
  if (key !== null && !sort.startsWith('name') && !/^(-infinity|\d{4,}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?[+-]\d\d(:\d\d){0,2})$/.test(key)) {
    throw bad('is not a cursor of this list')
  }
  return { key, path }
}

// ---- content rewriting ----

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isBlock = (v: unknown): v is Record<string, unknown> & { component: string } => isObject(v) && typeof v.component === 'string'

/** Calls `visit` on every block of a document, nested ones included (top-level blocks with `top` true). */
function eachBlock(blocks: unknown, visit: (block: Record<string, unknown> & { component: string }, top: boolean) => void, top = true, depth = 0) {
  if (!Array.isArray(blocks) || depth > 16) return
  for (const b of blocks) {
    if (!isBlock(b)) continue
    visit(b, top)
    for (const v of Object.values(b)) if (Array.isArray(v)) eachBlock(v, visit, false, depth + 1)
  }
}

const isStoryLink = (v: unknown): v is Record<string, unknown> & { story_uuid: string } => isObject(v) && typeof v.story_uuid === 'string' && UUID.test(v.story_uuid)

/** Story uuids a relation field holds: a uuid, a list of them, a link `{story_uuid}` or a list of links. */
function relationUuids(v: unknown, into: string[]) {
  for (const x of Array.isArray(v) ? v : [v]) {
    if (typeof x === 'string' && UUID.test(x)) into.push(x.toLowerCase())
    else if (isStoryLink(x)) into.push(x.story_uuid.toLowerCase())
  }
}

interface ItemData {
  content: { blocks?: unknown }
  [k: string]: unknown
}

// ---- the lists ----

export class PublicLists {
  /** Pages of paths of the published list per Space and query, until the next change of the Space. */
  readonly pages: ScopedCache<{ spaceId: number; key: string; filter: repo.PublicListFilter; sort: ListSort }, PageOfPaths>

  constructor(
    private kernel: Kernel,
    private pipeline: StoryReadPipeline,
  ) {
    const space = (e: { spaceId: number | null }) => e.spaceId
    this.pages = new ScopedCache({
      name: 'stories.list',
      scopeOf: (k) => k.spaceId,
      idOf: (k) => `${k.spaceId}\u0000${k.key}`,
      load: (k) => this.loadPage(k.spaceId, k.filter, k.sort),
      now: () => kernel.clock.ms(),
      ttlMs: 10 * 60_000,
      maxEntries: 20_000,
      invalidateOn: {
        'story.published': space,
        'story.unpublished': space,
        'story.deleted': space,
        'story.moved': space,
        'space.archived': space,
        'space.locales_changed': space,
      },
    })
  }

  private async loadPage(spaceId: number, filter: repo.PublicListFilter, sort: ListSort): Promise<PageOfPaths> {
    const rows = await this.kernel.replicas.read(spaceId, (db) => repo.publicListPage(db, spaceId, { ...filter, limit: filter.limit + 1 }))
    const page = rows.slice(0, filter.limit)
    const last = page[page.length - 1]
    const next = rows.length > filter.limit && last ? encodeCursor(sort, filter.mode, last.key, last.fullPath) : null
    return { paths: page.map((r) => r.fullPath), next }
  }

  /** `GET /cdn/{space}/stories`: a page of Stories as the single read serves each. */
  async list(base: ReadRequest, q: ListQuery, authorization: string | null): Promise<Composed> {
    const draft = q.version === 'draft'
    const opts = readOptionsOf(q)
    const sort = q.sort_by ?? 'full_path:asc'
    const [field, dir] = sort.split(':') as [repo.ListSortField, 'asc' | 'desc']
    const mode = draft ? 'draft' : 'published'
    const uuids = splitList(q.by_uuids)
    if (uuids && (uuids.length > MAX_LIST_ITEMS || !uuids.every((u) => UUID.test(u)))) {
      throw validationFailed({ by_uuids: [`must be a comma-separated list of at most ${MAX_LIST_ITEMS} uuids`] })
    }
    const paths = splitList(q.by_paths)?.map((p) => publicPathToFullPath(p.startsWith('/') ? p.slice(1) : p))
    if (paths && (paths.length > MAX_LIST_ITEMS || paths.some((p) => p === null))) {
      throw validationFailed({ by_paths: [`must be a comma-separated list of at most ${MAX_LIST_ITEMS} full paths`] })
    }
    if (q.content_type !== undefined && !BLUEPRINT_NAME.test(q.content_type)) throw validationFailed({ content_type: ['must be a component name'] })
    const filter: repo.PublicListFilter = {
      mode,
      prefix: pathPrefixOf(q.starts_with, 'starts_with'),
      uuids: uuids ? [...new Set(uuids.map((u) => u.toLowerCase()))] : null,
      paths: paths ? [...new Set(paths as string[])] : null,
      contentType: q.content_type ?? null,
      isFolder: q.is_folder === undefined ? null : q.is_folder === 'true',
      sort: field,
      desc: dir === 'desc',
      after: q.cursor !== undefined ? decodeCursor(q.cursor, sort, mode) : null,
      limit: q.per_page ?? LIST_PER_PAGE.def,
    }

    const space = await this.pipeline.space(base.spaceSlug)
    if (!space) throw notFound('Space')
    this.pipeline.chain(space, base.lang, base.acceptLanguage) // 422 for a bad lang, before any query
    if (draft) await requireDraftReader(this.kernel, authorization, space)
    const cv = await this.pipeline.versions.get(space.id)

    const page = draft
      ? await this.loadPage(space.id, filter, sort)
      : await this.pages.get({ spaceId: space.id, key: JSON.stringify(filter), filter, sort })
    if (!draft) await this.pipeline.prime(space, page.paths)
    const served = (
      await Promise.all(page.paths.map((p) => this.readOne(base, space, p, draft, authorization)))
    ).filter((s): s is Served => s !== null)

    const items = await this.items(served, opts, space, base)
    const rels = opts.relations ? await this.relations(items.datas, opts.relations, space, base, draft, authorization) : null
    const metaEntries: [string, unknown][] = [
      ['cv', cv],
      ['per_page', filter.limit],
      ['next_cursor', page.next],
    ]
    if (rels?.unresolved.length) metaEntries.push(['rel_uuids', rels.unresolved])
    const parts: BlobPart[] = ['{"data":[']
    items.parts.forEach((p, i) => parts.push(...(i ? [','] : []), ...p))
    parts.push(']')
    if (rels) {
      parts.push(',"rels":[')
      rels.parts.forEach((p, i) => parts.push(...(i ? [','] : []), ...p))
      parts.push(']')
    }
    parts.push(`,"meta":{${metaEntries.map(([k, v]) => `"${k}":${JSON.stringify(v)}`).join(',')}}}`)
    return this.compose(parts, [...served, ...(rels?.served ?? [])], draft, null)
  }

  /** `?resolve_links` / `?resolve_relations` / `?excluding_fields` on the single read: its body, rewritten. */
  async single(base: ReadRequest, served: Served, opts: ReadOptions, authorization: string | null): Promise<Composed> {
    const space = await this.pipeline.space(base.spaceSlug)
    if (!space) throw notFound('Story')
    const r = served.rendered
    const items = await this.items([served], opts, space, base, true)
    const draft = base.preview
    const rels = opts.relations ? await this.relations(items.datas, opts.relations, space, base, draft, authorization) : null
    let meta = await r.body.slice(8 + r.dataBytes + 8, r.body.size - 1).text()
    if (rels?.unresolved.length) meta = `${meta.slice(0, -1)}${meta.length > 2 ? ',' : ''}"rel_uuids":${JSON.stringify(rels.unresolved)}}`
    const parts: BlobPart[] = ['{"data":', ...items.parts[0]]
    if (rels) {
      parts.push(',"rels":[')
      rels.parts.forEach((p, i) => parts.push(...(i ? [','] : []), ...p))
      parts.push(']')
    }
    parts.push(`,"meta":${meta}}`)
    return this.compose(parts, [served, ...(rels?.served ?? [])], draft, r.headers['Content-Language'] ?? null)
  }

  /** One Story of a list through the read pipeline (published, or its drafts); null when it is gone meanwhile. */
  private async readOne(base: ReadRequest, space: PublicSpace, fullPath: string, draft: boolean, authorization: string | null): Promise<Served | null> {
    const req: ReadRequest = { ...base, spaceSlug: space.slug, rawPath: fullPath.slice(1), preview: draft }
    try {
      return draft ? await this.pipeline.preview(req, authorization, true) : await this.pipeline.read(req)
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return null
      throw err
    }
  }

  /**
   * The items of a list (or the single read's `data`): each cached body's `data` with its `meta` inside — bytes sliced
   * from the cached body, no JSON work — unless options rewrite the content (then it is parsed, rewritten, written).
   * `bare`: the single read's `data` alone (its `meta` stays where it is).
   */
  private async items(served: Served[], opts: ReadOptions, space: PublicSpace, base: ReadRequest, bare = false) {
    const parts: BlobPart[][] = []
    const datas: ItemData[] = []
    if (!opts.excluding && !opts.resolveLinks) {
      for (const s of served) {
        const b = s.rendered.body
        const end = 8 + s.rendered.dataBytes
        parts.push(bare ? [b.slice(8, end)] : [b.slice(8, end - 1), ',"meta":', b.slice(end + 8, b.size - 1), '}'])
      }
      // Relations read the content: parse it only then.
      if (opts.relations) for (const s of served) datas.push(JSON.parse(await dataText(s)) as ItemData)
      return { parts, datas }
    }
    for (const s of served) datas.push(JSON.parse(await dataText(s)) as ItemData)
    if (opts.excluding) {
      const drop = opts.excluding
      for (const d of datas) eachBlock(d.content?.blocks, (b, top) => void (top && Object.keys(b).forEach((k) => drop.has(k) && delete b[k])))
    }
    if (opts.resolveLinks) await this.resolveLinks(datas, space, base)
    served.forEach((s, i) => {
      const json = JSON.stringify(datas[i])
      const b = s.rendered.body
      const end = 8 + s.rendered.dataBytes
      parts.push(bare ? [json] : [json.slice(0, -1), ',"meta":', b.slice(end + 8, b.size - 1), '}'])
    })
    return { parts, datas }
  }

  /** `resolve_links=story`: each link `{story_uuid}` gets the target's current `full_path` and `name` (null: not published). */
  private async resolveLinks(datas: ItemData[], space: PublicSpace, base: ReadRequest) {
    const links: (Record<string, unknown> & { story_uuid: string })[] = []
    for (const d of datas) {
      eachBlock(d.content?.blocks, (b) => {
        for (const v of Object.values(b)) for (const x of Array.isArray(v) ? v : [v]) if (isStoryLink(x)) links.push(x)
      })
    }
    if (!links.length) return
    const uuids = links.map((l) => l.story_uuid)
    // Drafts (a preview) read the primary, as the rest of a draft read does.
    const byUuid = base.preview
      ? await repo.publishedPathsByUuids(this.kernel.db.db, space.id, uuids)
      : await this.kernel.replicas.read(space.id, (db) => repo.publishedPathsByUuids(db, space.id, uuids))
    const chain = this.pipeline.chain(space, base.lang, base.acceptLanguage)
    await this.pipeline.prime(space, [...byUuid.values()])
    const now = this.kernel.clock.ms()
    for (const l of links) {
      const path = byUuid.get(l.story_uuid.toLowerCase()) ?? null
      const story = path ? await this.pipeline.story(space, path, now) : null
      let name: string | null = null
      if (story) for (const c of [...chain, story.lang]) if ((name = story.snapshots.get(c)?.name ?? null) !== null) break
      l.full_path = story ? path : null
      l.name = name
    }
  }

  /** `resolve_relations`: the Stories the named fields hold, read like the list's own items, at most MAX_RELS. */
  private async relations(
    datas: ItemData[],
    specs: Map<string, Set<string>>,
    space: PublicSpace,
    base: ReadRequest,
    draft: boolean,
    authorization: string | null,
  ) {
    const found: string[] = []
    for (const d of datas) {
      eachBlock(d.content?.blocks, (b) => {
        const fields = specs.get(b.component)
        if (fields) for (const f of fields) relationUuids(b[f], found)
      })
    }
    const own = new Set(datas.map((d) => String(d.uuid)))
    const uuids = [...new Set(found)].filter((u) => !own.has(u))
    const take = uuids.slice(0, MAX_RELS)
    const unresolved = uuids.slice(MAX_RELS)
    const paths = !take.length
      ? new Map<string, string>()
      : draft
        ? await repo.publishedPathsByUuids(this.kernel.db.db, space.id, take)
        : await this.kernel.replicas.read(space.id, (db) => repo.publishedPathsByUuids(db, space.id, take))
    if (!draft) await this.pipeline.prime(space, [...paths.values()])
    const served = (await Promise.all(take.flatMap((u) => (paths.has(u) ? [this.readOne(base, space, paths.get(u)!, draft, authorization)] : []))))
      .filter((s): s is Served => s !== null)
    const items = await this.items(served, { resolveLinks: false, relations: null }, space, base)
    return { parts: items.parts, served, unresolved }
  }

  /** The answer of a composed body: the single read's headers (publicHeaders), ETag of these bytes, the steps' decisions. */
  private async compose(parts: BlobPart[], served: Served[], draft: boolean, lang: string | null): Promise<Composed> {
    const bytes = await new Blob(parts).bytes()
    const etag = etagOf(bytes)
    const decided = served.find((s) => s.cacheControl !== null)?.cacheControl ?? null
    const { headers, notModifiedHeaders } = publicHeaders(etag, draft ? this.pipeline.publicCacheControl(true) : (decided ?? this.pipeline.publicCacheControl(false)), lang)
    const extra = served.find((s) => s.headers !== null)?.headers
    if (extra) for (const target of [headers, notModifiedHeaders]) Object.assign(target, extra)
    return { bytes, etag, headers, notModifiedHeaders }
  }

  /** `GET /cdn/{space}/changes?since=`: public changes after a cursor, oldest first. */
  async changes(slug: string, since: string | undefined, perPage: number): Promise<Composed> {
    const space = await this.pipeline.space(slug)
    if (!space) throw notFound('Space')
    if (since !== undefined && !/^\d{1,15}$/.test(since)) throw validationFailed({ since: ['must be a cursor from a previous answer (meta.next_cursor or meta.cv)'] })
    const after = since === undefined ? 0 : Number(since)
    // The head first: rows committed after it are left for the next call (never skipped: numbers commit in order).
    const { cv, rows } = await this.kernel.replicas.read(space.id, async (db) => {
      const cv = await contentVersion(db, space.id)
      return { cv, rows: (await changesSince(db, space.id, after, perPage + 1)).filter((r) => r.seq <= cv) }
    })
    const page = rows.slice(0, perPage)
    const more = rows.length > perPage
    const next = more ? page[page.length - 1].seq : Math.max(after, cv)
    const data = page.map((r) => ({
      kind: r.kind,
      uuid: r.uuid,
      full_path: r.fullPath,
      ...(r.fromPath !== null ? { from_path: r.fromPath } : {}),
      cv: r.seq,
      at: r.createdAt.toISOString(),
    }))
    const json = JSON.stringify({ data, meta: { cv, next_cursor: String(next), has_more: more } })
    const bytes = encoder.encode(json)
    const etag = etagOf(bytes)
    return { bytes, etag, ...publicHeaders(etag, this.pipeline.publicCacheControl(false), null) }
  }
}

async function dataText(s: Served): Promise<string> {
  return s.rendered.body.slice(8, 8 + s.rendered.dataBytes).text()
}
