import { requireDraftReader } from '../../kernel/preview'
import { notFound } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import { spaceLocaleChain } from '../../kernel/locale'
import { answerHeaders, type AnswerHeaders, cacheControls, type CacheControls, etagOf } from '../../kernel/public-answer'
import { type ReadContext, type ReadRequest, type ReadStep, readVary, type RenderDraft } from '../../kernel/read'
import type { PublicSpace, PublicSpaces } from '../spaces/public'
import { applyUntranslatable, type Doc } from './blocks'
import type { DecidedHeaders, PublishedStory, Rendered, Snapshot, StoryCache } from './cache'
import { publicPathToFullPath } from './paths'
import * as repo from './repo'

/**
 * The public Story read (spec 4.5) as one pipeline:
 *
 *   resolve Space → resolve locale chain → load snapshot → read steps (kernel/read.ts) → render
 *
 * The first three stages are this module's; the modules' read steps (kernel.readSteps, in module-list order) add
 * their decisions and meta entries — this file names no feature. The rendered body and its ETag are cached per Story
 * under the render key (locale and the steps' key parts), so a cache hit is a few map lookups and no JSON work; and
 * when every stage answers from memory the whole read is synchronous (the fast path of src/app.ts serves it).
 */

/** What one read serves: the (cached) rendered body and what the steps decided for this request alone. */
export interface Served {
  rendered: Rendered
  headers: Record<string, string> | null
  cacheControl: string | null
  /** The response headers for `headers` and `cacheControl` on `rendered`, once looked up (a memoised read reuses them). */
  decided?: DecidedHeaders
  /** The cached Story whose `renders` hold `rendered` (a read served from the cache; the read memo links to it). */
  story?: PublishedStory
}

const encoder = new TextEncoder()

/** The Space content version (`meta.cv`) as the stories module keeps it: from memory when it can. */
export interface ContentVersions {
  get(spaceId: number): number | Promise<number>
  /** When the cached version of a Space expires (epoch ms), 0 when none is cached. */
  expiresAt(spaceId: number): number
}


export class StoryReadPipeline {
  private readonly cacheControls: CacheControls
  private varyOfSteps: string | undefined

  constructor(
    private kernel: Kernel,
    private cache: StoryCache,
    private spaces: PublicSpaces,
    readonly versions: ContentVersions,
  ) {
    this.cacheControls = cacheControls(kernel.config)
  }

  /** The Cache-Control of a public answer (the Story read, the list, the change feed); `preview`: never stored. */
  publicCacheControl(preview: boolean): string {
    return preview ? this.cacheControls.draft : this.cacheControls.public
  }

  /** `Vary` of the read: Accept-Language and the request headers the read steps declare (known once they are registered). */
  get vary(): string {
    return (this.varyOfSteps ??= readVary(this.steps))
  }

  /**
   * The headers of a public answer (the Story read, the Story list, the change feed): its ETag, Cache-Control and
   * `Vary` for 200 and 304, Content-Type and Content-Language for 200 only.
   */
  headersOf(etag: string, cacheControl: string, lang: string | null): AnswerHeaders {
    return answerHeaders(etag, { cacheControl, vary: this.vary, contentLanguage: lang })
  }

  private get steps(): ReadStep[] {
    return this.kernel.readSteps
  }

  // ---- Stage 1: Space ----

  space(slug: string): PublicSpace | null | Promise<PublicSpace | null> {
    return this.spaces.get(slug)
  }

  // ---- Stage 2: locale ----

  chain(space: PublicSpace, lang: string | undefined, acceptLanguage: string | null): string[] {
    return spaceLocaleChain(space, lang, acceptLanguage)
  }

  // ---- Stage 3: snapshot ----

  story(space: PublicSpace, fullPath: string, now: number): PublishedStory | null | Promise<PublishedStory | null> {
    const cache = this.cache
    const hit = cache.story(space.id, fullPath, now)
    if (hit !== undefined) return hit
    return cache.load(space.id, fullPath)
  }

  /** The published Story of a path from the database (null: none), for the cache to store (StoryCache's loader). */
  async loadStory(spaceId: number, fullPath: string): Promise<PublishedStory | null> {
    const rows = await this.kernel.replicas.read(spaceId, (db) => repo.publishedByPath(db, spaceId, fullPath))
    return rows.length ? entryOf(spaceId, rows) : null
  }

  /**
   * Loads the published snapshots of many paths into the cache in one query (paths already cached are skipped), so
   * that reading each of them next is a cache hit: a list of N Stories costs a fixed number of queries, not N. A
   * load that raced with an invalidation is not stored (the reads then load for themselves, as always).
   */
  async prime(space: PublicSpace, fullPaths: string[]): Promise<void> {
    const now = this.kernel.clock.ms()
    const missing = [...new Set(fullPaths)].filter((p) => this.cache.story(space.id, p, now) === undefined)
    if (!missing.length) return
    const epoch = this.cache.epoch(space.id)
    const byPath = new Map<string, repo.PublishedRow[]>()
    for (const r of await this.kernel.replicas.read(space.id, (db) => repo.publishedByPaths(db, space.id, missing))) {
      const list = byPath.get(r.fullPath)
      if (list) list.push(r)
      else byPath.set(r.fullPath, [r])
    }
    for (const p of missing) {
      const rows = byPath.get(p)
      this.cache.storeStory(space.id, p, rows ? entryOf(space.id, rows) : null, epoch)
    }
  }

  // ---- The whole read ----

  /**
   * Serves the published snapshot; throws AppError 404/422. Synchronous (no Promise) when the Space, the Story and
   * the body are cached and every step decides from memory.
   */
  read(req: ReadRequest): Served | Promise<Served> {
    const fullPath = publicPathToFullPath(req.rawPath)
    if (!fullPath) throw notFound('Story')
    const space = this.space(req.spaceSlug)
    if (space instanceof Promise) return space.then((s) => this.readIn(req, fullPath, s))
    return this.readIn(req, fullPath, space)
  }

  /**
   * What a synchronous `read(req)` just used, for the fast path's memo: the Space, and the earliest expiry of the
   * cached Space and Story entries. Null when either is not cached (nothing to memoise).
   */
  readSource(req: ReadRequest): { space: PublicSpace; expiresAt: number } | null {
    const fullPath = publicPathToFullPath(req.rawPath)
    const space = fullPath ? this.space(req.spaceSlug) : null
    if (!space || space instanceof Promise) return null
    const expiresAt = Math.min(this.spaces.expiresAt(space.slug), this.cache.expiresAt(space.id, fullPath!), this.versions.expiresAt(space.id))
    return expiresAt > 0 ? { space, expiresAt } : null
  }

  private readIn(req: ReadRequest, fullPath: string, space: PublicSpace | null): Served | Promise<Served> {
    if (!space) throw notFound('Story')
    const chain = this.chain(space, req.lang, req.acceptLanguage)
    const cv = this.versions.get(space.id)
    if (cv instanceof Promise) return cv.then((v) => this.readAt(req, fullPath, space, chain, v))
    return this.readAt(req, fullPath, space, chain, cv)
  }

  private readAt(req: ReadRequest, fullPath: string, space: PublicSpace, chain: string[], cv: number): Served | Promise<Served> {
    const story = this.story(space, fullPath, this.kernel.clock.ms())
    if (story instanceof Promise) return story.then((s) => this.readStory(req, space, chain, s, cv))
    return this.readStory(req, space, chain, story, cv)
  }

  private readStory(req: ReadRequest, space: PublicSpace, chain: string[], story: PublishedStory | null, cv: number): Served | Promise<Served> {
    if (!story) throw notFound('Story')
    const snapshot = pickSnapshot(story.snapshots, chain, story.lang)
    const ctx = newContext(req, space, story, snapshot.lang)
    const selected = this.select(ctx, 0)
    if (selected instanceof Promise) return selected.then(() => this.served(ctx, story, snapshot, space, undefined, cv))
    return this.served(ctx, story, snapshot, space, undefined, cv)
  }

  /** Runs the steps' `select` from `from` on, staying synchronous until a step returns a Promise. */
  private select(ctx: ReadContext, from: number): void | Promise<void> {
    const steps = this.steps
    for (let i = from; i < steps.length; i++) {
      const r = steps[i].select?.(ctx)
      if (r instanceof Promise) return r.then(() => this.select(ctx, i + 1))
    }
  }

  private served(
    ctx: ReadContext,
    story: PublishedStory,
    snapshot: Snapshot,
    space: PublicSpace,
    publishedAt: string | null | undefined,
    cv: number,
  ): Served | Promise<Served> {
    const preview = ctx.req.preview
    // Bodies carry `meta.cv`: when the Space's content version moved on, the Story's cached bodies are stale.
    if (!preview && story.rendersCv !== cv) {
      if (story.renders.size) this.cache.dropRenders(story)
      story.rendersCv = cv
    }
    const renderKey = preview ? '' : ctx.keyParts.length ? `${snapshot.lang}\u0000${ctx.keyParts.join('\u0000')}` : snapshot.lang
    const cached = preview ? undefined : story.renders.get(renderKey)
    if (cached) return { rendered: cached, headers: ctx.headers, cacheControl: ctx.cacheControl, story }
    return this.transformAndRender(ctx, story, snapshot, space, publishedAt === undefined ? snapshot.publishedAt : publishedAt, cv).then(({ rendered, cacheable }) => {
      if (!preview && cacheable && story.rendersCv === cv) this.cache.storeRender(story, renderKey, rendered)
      return { rendered, headers: ctx.headers, cacheControl: ctx.cacheControl }
    })
  }

  private async transformAndRender(
    ctx: ReadContext,
    story: PublishedStory,
    snapshot: Snapshot,
    space: PublicSpace,
    publishedAt: string | null,
    cv: number,
  ): Promise<{ rendered: Rendered; cacheable: boolean }> {
    const draft: RenderDraft = { contentJson: snapshot.contentJson, meta: { cv } }
    for (const step of this.steps) if (step.transform) await step.transform(ctx, draft)
    const rendered = render(
      {
        id: story.id,
        uuid: story.uuid,
        name: snapshot.name,
        slug: story.slug,
        fullPath: story.fullPath,
        lang: snapshot.lang,
        versionNo: snapshot.versionNo,
        publishedAt,
        contentJson: draft.contentJson,
      },
      draft.meta,
      (etag) => this.headersOf(etag, this.publicCacheControl(ctx.req.preview), snapshot.lang),
    )
    return { rendered, cacheable: draft.cacheable !== false }
  }

  /**
   * `?version=draft`: the latest drafts for a bearer with access to the Space, or a preview token of it
   * (kernel/preview.ts). Never cached, here or downstream.
   * The read steps run too, so a preview shows what publishing would serve.
   */
  async preview(req: ReadRequest, authorization: string | null, checked = false): Promise<Served> {
    const fullPath = publicPathToFullPath(req.rawPath)
    const space = await this.space(req.spaceSlug)
    if (!space) throw notFound('Story')
    const chain = this.chain(space, req.lang, req.acceptLanguage)
    // `checked`: the caller (a draft list) checked the reader once for all its Stories.
    const grant = checked ? null : await requireDraftReader(this.kernel, authorization, space)
    if (!fullPath) throw notFound('Story')
    const rows = await repo.draftsByPath(this.kernel.db.db, space.id, fullPath)
    if (!rows.length) throw notFound('Story')
    const first = rows[0]
    const byLang = new Map(rows.map((r) => [r.lang, r]))
    const lang = chain.find((c) => byLang.has(c)) ?? first.storyLang
    const row = byLang.get(lang) ?? rows[0]
    // The visual editor's unsaved snapshot of this Story and locale, stored against this very preview token.
    const unsaved = grant && this.kernel.previewTokens?.snapshot ? await this.kernel.previewTokens.snapshot(grant, first.uuid, row.lang) : null
    let content = (unsaved ? unsaved.content : row.content) as Doc
    if (row.lang !== first.storyLang && byLang.has(first.storyLang)) {
      content = applyUntranslatable(content, byLang.get(first.storyLang)!.content as Doc, await repo.blueprintsOf(this.kernel.db.db, space.id))
    }
    const snapshot: Snapshot = {
      lang: row.lang,
      name: unsaved?.name ?? row.name ?? first.storyName,
      contentJson: JSON.stringify(content),
      versionNo: first.versionNo,
      publishedAt: first.publishedAt?.toISOString() ?? '',
    }
    const story: PublishedStory = {
      spaceId: space.id,
      id: first.id,
      uuid: first.uuid,
      slug: first.slug,
      fullPath: first.fullPath,
      lang: first.storyLang,
      snapshots: new Map([[row.lang, snapshot]]),
      renders: new Map(),
      bytes: 0,
    }
    const ctx = newContext({ ...req, preview: true }, space, story, snapshot.lang)
    await this.select(ctx, 0)
    return this.served(ctx, story, snapshot, space, first.publishedAt?.toISOString() ?? null, await this.versions.get(space.id))
  }
}

/** A cache entry from the rows of one Story (one per published locale). */
function entryOf(spaceId: number, rows: repo.PublishedRow[]): PublishedStory {
  const first = rows[0]
  const snapshots = new Map<string, Snapshot>()
  let bytes = 256
  for (const r of rows) {
    snapshots.set(r.lang, {
      lang: r.lang,
      name: r.name,
      contentJson: r.contentJson,
      versionNo: r.versionNo,
      publishedAt: r.publishedAt.toISOString(),
    })
    bytes += r.contentJson.length + r.name.length + 64
  }
  return {
    spaceId,
    id: first.id,
    uuid: first.uuid,
    slug: first.slug,
    fullPath: first.fullPath,
    lang: first.storyLang,
    snapshots,
    renders: new Map(),
    bytes,
  }
}

function newContext(req: ReadRequest, space: PublicSpace, story: PublishedStory, lang: string): ReadContext {
  return { req, space, story, lang, keyParts: [], headers: null, cacheControl: null, decisions: {} }
}

interface RenderInput {
  id: number
  uuid: string
  name: string
  slug: string
  fullPath: string
  lang: string
  versionNo: number
  publishedAt: string | null
  contentJson: string
}

function render(d: RenderInput, meta: Record<string, unknown>, headersOf: (etag: string) => AnswerHeaders): Rendered {
  // Built by hand around the stored content text: uuid, slug, path and lang are from safe alphabets; the rest goes
  // through JSON.stringify.
  let metaJson = ''
  for (const key in meta) metaJson += `${metaJson ? ',' : ''}${JSON.stringify(key)}:${JSON.stringify(meta[key] ?? null)}`
  const data = encoder.encode(
    `{"id":${d.id},"uuid":"${d.uuid}","name":${JSON.stringify(d.name)},"slug":"${d.slug}",` +
      `"full_path":"${d.fullPath}","lang":"${d.lang}","version_no":${d.versionNo},` +
      `"published_at":${d.publishedAt ? `"${d.publishedAt}"` : 'null'},"content":${d.contentJson}}`,
  )
  const parts = [DATA_OPEN, data, META_OPEN, encoder.encode(metaJson), CLOSE2]
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let n = 0
  for (const part of parts) {
    bytes.set(part, n)
    n += part.length
  }
  const etag = etagOf(bytes)
  const { ok: headers, notModified: notModifiedHeaders } = headersOf(etag)
  return {
    body: new Blob([bytes]),
    dataBytes: data.length,
    etag,
    headers,
    notModifiedHeaders,
    prebuilt: new Headers(headers),
    prebuiltNotModified: new Headers(notModifiedHeaders),
  }
}

const DATA_OPEN = encoder.encode('{"data":')
const META_OPEN = encoder.encode(',"meta":{')
const CLOSE2 = encoder.encode('}}')

/** The first locale of the chain the Story was published in; the Story's own locale as the last resort. */
export function pickSnapshot(snapshots: Map<string, Snapshot>, chain: string[], own: string): Snapshot {
  for (const c of chain) {
    const s = snapshots.get(c)
    if (s) return s
  }
  return snapshots.get(own) ?? snapshots.values().next().value!
}
