import type { Deps } from '../../deps'
import { requirePrincipal, requireSpaceAccess } from '../../kernel/auth'
import { notFound, validationFailed } from '../../kernel/errors'
import { canonicalLocale } from '../../kernel/locale'
import { localeSettings } from '../locales/service'
import { findLiveSpace } from '../spaces/service'
import { applyUntranslatable, type Doc } from './blocks'
import type { PublishedStory, Rendered, Snapshot, SpaceSettings } from './cache'
import { publicPathToFullPath } from './paths'
import * as repo from './repo'

/**
 * The public Story read (spec 4.5) as one pipeline:
 *
 *   resolve Space → resolve locale chain → load snapshot → [extension steps: segment, datasources …] → render
 *
 * The first three stages are this module's; later features plug in as ReadSteps. A step has two halves:
 * - `select` runs on every request and must be cheap: it reads request signals and records its decision in the
 *   context (`servedSegment`, or a `keyParts` entry such as a datasource data version). Equal decisions ⇒ equal body.
 * - `transform` runs only when no body is cached for that decision: it may swap or rewrite the content.
 * The rendered body and its ETag are cached per Story under the render key (locale, segment, step key parts,
 * origin), so a cache hit is a few map lookups and no JSON work at all.
 */

export interface ReadRequest {
  spaceSlug: string
  /** `{path}`: the full path without its leading slash, as it came in the URL. */
  rawPath: string
  lang: string | undefined
  acceptLanguage: string | null
  /** Base of absolute URLs (PUBLIC_URL or the request's origin). */
  origin: string
  request: Request
}

export interface ReadContext {
  readonly req: ReadRequest
  readonly space: SpaceSettings
  readonly chain: string[]
  readonly story: PublishedStory
  /** The snapshot of the locale being served (a step may not change the locale). */
  readonly snapshot: Snapshot
  /** `meta.served_segment`: set by the segment step. */
  servedSegment: string | null
  /** Decisions of steps that change the body beyond locale and segment (part of the render key). */
  keyParts: string[]
}

export interface RenderDraft {
  /** The content as JSON text; a transforming step parses it, edits and stores it back. */
  contentJson: string
  /** `meta.datasource_refs`: datasource key → number of markers resolved. */
  datasourceRefs: Record<string, number>
}

export interface ReadStep {
  name: string
  select?(ctx: ReadContext): void | Promise<void>
  transform?(ctx: ReadContext, draft: RenderDraft): void | Promise<void>
}

const SPACE_SLUG = /^[a-z][a-z0-9-]{0,63}$/
const MAX_CHAINS_PER_SPACE = 512
const encoder = new TextEncoder()

/** The language subtag of a canonical tag: de-AT → de, zh-Hant-TW → zh. */
const languageOf = (tag: string) => {
  const i = tag.indexOf('-')
  return i === -1 ? tag : tag.slice(0, i)
}

/**
 * Locale chain: the requested tag; its explicit fallback; its language subtag; the Space default. Only the Space's
 * locales take part. Without `lang`, the best Accept-Language match stands in for the requested tag.
 */
export function localeChain(space: Pick<SpaceSettings, 'codes' | 'fallbacks' | 'defaultLang'>, requested: string | null): string[] {
  const chain: string[] = []
  const add = (c: string | null | undefined) => {
    if (c && space.codes.includes(c) && !chain.includes(c)) chain.push(c)
  }
  if (requested) {
    add(requested)
    add(space.fallbacks.get(requested))
    add(languageOf(requested))
  }
  add(space.defaultLang)
  return chain
}

/** RFC 4647 lookup over an Accept-Language header: highest q first, then truncating each range. */
export function bestAcceptLanguage(header: string, codes: string[]): string | null {
  const ranges: { tag: string; q: number; i: number }[] = []
  const parts = header.split(',')
  for (let i = 0; i < parts.length && i < 32; i++) {
    const [rawTag, ...params] = parts[i].trim().split(';')
    let q = 1
    for (const p of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p)
      if (m) q = Number(m[1])
    }
    const tag = rawTag.trim()
    if (q > 0 && tag && tag !== '*') ranges.push({ tag, q, i })
  }
  ranges.sort((a, b) => b.q - a.q || a.i - b.i)
  for (const r of ranges) {
    const c = canonicalLocale(r.tag)
    if (!c) continue
    for (let t = c; t; t = t.includes('-') ? t.slice(0, t.lastIndexOf('-')) : '') if (codes.includes(t)) return t
    // A bare language range ("de") also accepts a regional locale ("de-AT").
    const regional = codes.find((code) => languageOf(code) === c)
    if (regional) return regional
  }
  return null
}

export class StoryReadPipeline {
  private inflightSpaces = new Map<string, Promise<SpaceSettings | null>>()
  private inflightStories = new Map<string, Promise<PublishedStory | null>>()
  private readonly cacheControl: string
  private readonly beacon: boolean

  constructor(
    private deps: Deps,
    private steps: ReadStep[] = [],
  ) {
    this.cacheControl = `public, max-age=${deps.config.cdnMaxAge}, stale-while-revalidate=${deps.config.cdnStaleWhileRevalidate}`
    this.beacon = deps.config.beaconEnabled
  }

  /** Whether rendered bodies depend on the request's origin (beacon URL without PUBLIC_URL). */
  get originDependent() {
    return this.beacon && !this.deps.config.publicUrl
  }

  // ---- Stage 1: Space ----

  space(slug: string, now = this.deps.clock.now().getTime()): SpaceSettings | null | Promise<SpaceSettings | null> {
    if (!SPACE_SLUG.test(slug)) return null
    const cache = this.deps.storyCache
    const hit = cache.space(slug, now)
    if (hit !== undefined) return hit
    // Keyed by generation: a request after an invalidation never joins a load that started before it.
    const generation = cache.spaceEpoch
    const key = `${generation}:${slug}`
    let p = this.inflightSpaces.get(key)
    if (!p) {
      p = this.loadSpace(slug, generation).finally(() => this.inflightSpaces.delete(key))
      this.inflightSpaces.set(key, p)
    }
    return p
  }

  private async loadSpace(slug: string, generation: number): Promise<SpaceSettings | null> {
    const space = await findLiveSpace(this.deps, slug)
    let settings: SpaceSettings | null = null
    if (space) {
      const l = await localeSettings(this.deps.db.db, space.id)
      settings = { id: space.id, slug, name: space.name, defaultLang: space.defaultLang, codes: l.codes, fallbacks: l.fallbacks, chains: new Map() }
    }
    this.deps.storyCache.storeSpace(slug, settings, generation)
    return settings
  }

  // ---- Stage 2: locale ----

  chain(space: SpaceSettings, lang: string | undefined, acceptLanguage: string | null): string[] {
    const key = lang !== undefined ? `?${lang}` : (acceptLanguage ?? '')
    let chain = space.chains.get(key)
    if (chain) return chain
    let requested: string | null
    if (lang !== undefined) {
      requested = canonicalLocale(lang)
      if (!requested) throw validationFailed({ lang: [`"${lang.slice(0, 40)}" is not a valid BCP-47 language tag.`] })
    } else {
      requested = acceptLanguage ? bestAcceptLanguage(acceptLanguage, space.codes) : null
    }
    chain = localeChain(space, requested)
    if (space.chains.size >= MAX_CHAINS_PER_SPACE) space.chains.clear()
    space.chains.set(key, chain)
    return chain
  }

  // ---- Stage 3: snapshot ----

  story(space: SpaceSettings, fullPath: string, now: number): PublishedStory | null | Promise<PublishedStory | null> {
    const cache = this.deps.storyCache
    const hit = cache.story(space.id, fullPath, now)
    if (hit !== undefined) return hit
    const epoch = cache.epoch(space.id)
    const key = `${epoch}:${space.id}${fullPath}`
    let p = this.inflightStories.get(key)
    if (!p) {
      p = this.loadStory(space.id, fullPath, epoch).finally(() => this.inflightStories.delete(key))
      this.inflightStories.set(key, p)
    }
    return p
  }

  private async loadStory(spaceId: number, fullPath: string, epoch: number): Promise<PublishedStory | null> {
    const cache = this.deps.storyCache
    const rows = await repo.publishedByPath(this.deps.db.db, spaceId, fullPath)
    let entry: PublishedStory | null = null
    if (rows.length) {
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
      entry = {
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
    cache.storeStory(spaceId, fullPath, entry, epoch)
    return entry
  }

  // ---- The whole read ----

  /** Serves the published snapshot; throws AppError 404/422. */
  async read(req: ReadRequest): Promise<Rendered> {
    const fullPath = publicPathToFullPath(req.rawPath)
    if (!fullPath) throw notFound('Story')
    const now = this.deps.clock.now().getTime()
    let space = this.space(req.spaceSlug, now)
    if (space instanceof Promise) space = await space
    if (!space) throw notFound('Story')
    const chain = this.chain(space, req.lang, req.acceptLanguage)
    let story = this.story(space, fullPath, now)
    if (story instanceof Promise) story = await story
    if (!story) throw notFound('Story')
    const snapshot = pickSnapshot(story.snapshots, chain, story.lang)
    const ctx: ReadContext = { req, space, chain, story, snapshot, servedSegment: null, keyParts: [] }
    for (const step of this.steps) if (step.select) await step.select(ctx)
    const renderKey = `${snapshot.lang}\u0000${ctx.servedSegment ?? ''}\u0000${ctx.keyParts.join('\u0000')}\u0000${this.originDependent ? req.origin : ''}`
    const cached = story.renders.get(renderKey)
    if (cached) return cached
    const draft: RenderDraft = { contentJson: snapshot.contentJson, datasourceRefs: {} }
    for (const step of this.steps) if (step.transform) await step.transform(ctx, draft)
    const rendered = this.render(
      {
        spaceSlug: space.slug,
        id: story.id,
        uuid: story.uuid,
        name: snapshot.name,
        slug: story.slug,
        fullPath: story.fullPath,
        lang: snapshot.lang,
        versionNo: snapshot.versionNo,
        publishedAt: snapshot.publishedAt,
        contentJson: draft.contentJson,
      },
      ctx.servedSegment,
      draft.datasourceRefs,
      req.origin,
      this.cacheControl,
    )
    this.deps.storyCache.storeRender(story, renderKey, rendered)
    return rendered
  }

  /**
   * `?version=draft`: the latest drafts for a bearer with access to the Space. Never cached, here or downstream.
   * Extension steps run too, so a preview shows what publishing would serve.
   */
  async preview(req: ReadRequest, authorization: string | null): Promise<Rendered> {
    const fullPath = publicPathToFullPath(req.rawPath)
    let space = this.space(req.spaceSlug)
    if (space instanceof Promise) space = await space
    if (!space) throw notFound('Story')
    const chain = this.chain(space, req.lang, req.acceptLanguage)
    const principal = await requirePrincipal(this.deps, authorization)
    await requireSpaceAccess(this.deps, principal, space.slug, 'viewer')
    if (!fullPath) throw notFound('Story')
    const rows = await repo.draftsByPath(this.deps.db.db, space.id, fullPath)
    if (!rows.length) throw notFound('Story')
    const first = rows[0]
    const byLang = new Map(rows.map((r) => [r.lang, r]))
    const lang = chain.find((c) => byLang.has(c)) ?? first.storyLang
    const row = byLang.get(lang) ?? rows[0]
    let content = row.content as Doc
    if (row.lang !== first.storyLang && byLang.has(first.storyLang)) {
      content = applyUntranslatable(content, byLang.get(first.storyLang)!.content as Doc, await repo.blueprintsOf(this.deps.db.db, space.id))
    }
    const snapshot: Snapshot = {
      lang: row.lang,
      name: row.name ?? first.storyName,
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
    const ctx: ReadContext = { req, space, chain, story, snapshot, servedSegment: null, keyParts: [] }
    for (const step of this.steps) if (step.select) await step.select(ctx)
    const draft: RenderDraft = { contentJson: snapshot.contentJson, datasourceRefs: {} }
    for (const step of this.steps) if (step.transform) await step.transform(ctx, draft)
    return this.render(
      {
        spaceSlug: space.slug,
        id: story.id,
        uuid: story.uuid,
        name: snapshot.name,
        slug: story.slug,
        fullPath: story.fullPath,
        lang: snapshot.lang,
        versionNo: snapshot.versionNo,
        publishedAt: first.publishedAt?.toISOString() ?? null,
        contentJson: draft.contentJson,
      },
      ctx.servedSegment,
      draft.datasourceRefs,
      req.origin,
      'private, no-store',
    )
  }

  private render(
    d: {
      spaceSlug: string
      id: number
      uuid: string
      name: string
      slug: string
      fullPath: string
      lang: string
      versionNo: number
      publishedAt: string | null
      contentJson: string
    },
    servedSegment: string | null,
    datasourceRefs: Record<string, number>,
    origin: string,
    cacheControl: string,
  ): Rendered {
    // Built by hand around the stored content text: uuid, slug, path and lang are from safe alphabets; the rest
    // goes through JSON.stringify.
    const beacon = this.beacon ? `"beacon_url":${JSON.stringify(`${this.deps.config.publicUrl ?? origin}/v1/cdn/${d.spaceSlug}/_beacon`)},` : ''
    const json =
      `{"data":{"id":${d.id},"uuid":"${d.uuid}","name":${JSON.stringify(d.name)},"slug":"${d.slug}",` +
      `"full_path":"${d.fullPath}","lang":"${d.lang}","version_no":${d.versionNo},` +
      `"published_at":${d.publishedAt ? `"${d.publishedAt}"` : 'null'},"content":${d.contentJson}},` +
      `"meta":{${beacon}"served_segment":${JSON.stringify(servedSegment)},"datasource_refs":${JSON.stringify(datasourceRefs)}}}`
    const body = encoder.encode(json)
    const etag = `"${new Bun.CryptoHasher('sha256').update(body).digest('base64url').slice(0, 27)}"`
    const common = { ETag: etag, 'Cache-Control': cacheControl, Vary: 'Accept-Language, X-Service-Segment' }
    return {
      body,
      etag,
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'Content-Language': d.lang, ...common },
      notModifiedHeaders: common,
    }
  }

}

/** The first locale of the chain the Story was published in; the Story's own locale as the last resort. */
export function pickSnapshot(snapshots: Map<string, Snapshot>, chain: string[], own: string): Snapshot {
  for (const c of chain) {
    const s = snapshots.get(c)
    if (s) return s
  }
  return snapshots.get(own) ?? snapshots.values().next().value!
}

/** `If-None-Match` against a strong ETag (weak comparison, as RFC 9110 prescribes for GET); garbage never matches. */
export function etagMatches(header: string | null, etag: string): boolean {
  if (!header) return false
  if (header.trim() === '*') return true
  if (header.length > 4096) return false
  for (const part of header.split(',')) {
    const t = part.trim()
    if (t === etag || (t.startsWith('W/') && t.slice(2) === etag)) return true
  }
  return false
}
