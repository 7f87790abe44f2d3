/**
 * Content Layer loaders. `storyLoader` keeps a build-time collection in step with a Space: the first sync lists every
 * published Story (per locale), later syncs read only the change feed after the cursor kept in the loader's `meta`
 * store, re-read the Stories that were published or moved and delete the entries of those unpublished, deleted or moved
 * out of the filter. The blueprints (the schema) and the loader's version are hashed into `meta`: when either changes
 * the collection is reloaded in full. Entries are keyed `<locale>/<full_path>`.
 */
import type { LiveLoader, Loader, LoaderContext } from 'astro/loaders'
import { type Change, type ContentClient, createClient, type ListedStory } from '@content-service/sdk'
import { type Blueprint, blueprintsKey, storySchema } from './schema'

/** Bumped when what the loader stores changes: stores synced by another version are reloaded in full. */
export const LOADER_VERSION = '1'

export interface ConnectionOptions {
  /** The server, e.g. `https://cms.example.com` (default: the integration's, else CONTENT_SERVICE_URL). */
  baseUrl?: string
  /** The Space slug (default: the integration's, else CONTENT_SERVICE_SPACE). */
  space?: string
  /** A Space token with read access (viewer): reads the blueprints, which give the schema. CONTENT_SERVICE_TOKEN. */
  token?: string
  /** A preview token or a token for draft reads (getPreviewStory, liveStoryLoader with `version: 'draft'`). */
  previewToken?: string
  fetch?: typeof fetch
}

export interface StoryLoaderOptions extends ConnectionOptions {
  /** Only Stories whose full path starts with this (`blog/`). */
  startsWith?: string
  /** The locales to read; each Story gets one entry per locale (`de/blog/hello`). Default: the Space's default. */
  langs?: string[]
  /** Only Stories whose first top-level block is of this blueprint. */
  contentType?: string
  /** Folders too (default false). */
  folders?: boolean
}

const GLOBAL = Symbol.for('@content-service/astro:config')

/** The integration's options, seen by loaders and components of the same build. */
export function sharedConfig(): ConnectionOptions {
  return ((globalThis as Record<symbol, unknown>)[GLOBAL] as ConnectionOptions | undefined) ?? {}
}

export function setSharedConfig(c: ConnectionOptions) {
  ;(globalThis as Record<symbol, unknown>)[GLOBAL] = c
}

const env = (k: string) => (typeof process !== 'undefined' ? process.env?.[k] : undefined) || undefined

/** Options, else the integration's, else the environment. */
export function resolveConnection(o: ConnectionOptions = {}): Required<Pick<ConnectionOptions, 'baseUrl' | 'space'>> & ConnectionOptions {
  const g = sharedConfig()
  const baseUrl = o.baseUrl ?? g.baseUrl ?? env('CONTENT_SERVICE_URL')
  const space = o.space ?? g.space ?? env('CONTENT_SERVICE_SPACE')
  if (!baseUrl || !space) throw new Error('@content-service/astro: set baseUrl and space (the integration, the loader, or CONTENT_SERVICE_URL and CONTENT_SERVICE_SPACE)')
  return {
    baseUrl,
    space,
    token: o.token ?? g.token ?? env('CONTENT_SERVICE_TOKEN'),
    previewToken: o.previewToken ?? g.previewToken ?? env('CONTENT_SERVICE_PREVIEW_TOKEN'),
    fetch: o.fetch ?? g.fetch,
  }
}

const blueprintReads = new Map<string, Promise<Blueprint[] | null>>()

/** The Space's blueprints (one read per build), or null without a token (the schema then types blocks loosely). */
export function fetchBlueprints(o: ConnectionOptions = {}): Promise<Blueprint[] | null> {
  const c = resolveConnection(o)
  if (!c.token) return Promise.resolve(null)
  const key = `${c.baseUrl}\u0000${c.space}\u0000${c.token}`
  let p = blueprintReads.get(key)
  if (!p) {
    p = (async () => {
      const f = c.fetch ?? fetch
      const r = await f(`${c.baseUrl.replace(/\/+$/, '')}/v1/spaces/${encodeURIComponent(c.space)}/components`, {
        headers: { Authorization: `Bearer ${c.token}`, Accept: 'application/json' },
      })
      if (!r.ok) throw new Error(`@content-service/astro: reading the blueprints of ${c.space} answered ${r.status}: ${await r.text()}`)
      return ((await r.json()) as { data: Blueprint[] }).data
    })()
    blueprintReads.set(key, p)
    p.catch(() => blueprintReads.delete(key))
  }
  return p
}

/** The id of an entry: `<locale>/<full_path>` (`en/blog/hello`). */
export const entryId = (locale: string, fullPath: string) => `${locale}/${fullPath.replace(/^\/+/, '')}`

function clientOf(o: ConnectionOptions): ContentClient {
  const c = resolveConnection(o)
  return createClient({ baseUrl: c.baseUrl, space: c.space, token: c.token, previewToken: c.previewToken, fetch: c.fetch, cache: false, timeout: 30_000 })
}

/** What an entry holds: the Story as the list serves it, its `meta` left out, `locale` (the key's) added. */
function entryData(s: ListedStory, locale: string): Record<string, unknown> {
  const { meta: _meta, ...story } = s as ListedStory & { meta?: unknown }
  return { ...story, locale }
}

export function storyLoader(options: StoryLoaderOptions = {}): Loader {
  const filterKey = JSON.stringify([options.startsWith ?? '', options.contentType ?? '', options.langs ?? [], !!options.folders])
  return {
    name: '@content-service/astro',
    schema: async () => storySchema(await fetchBlueprints(options)),
    async load(ctx: LoaderContext) {
      const c = resolveConnection(options)
      const client = clientOf(options)
      const stamp = `${LOADER_VERSION}:${c.baseUrl}:${c.space}:${filterKey}:${blueprintsKey(await fetchBlueprints(options))}`
      const cursor = ctx.meta.get('cursor')
      const langs: (string | undefined)[] = options.langs?.length ? options.langs : [undefined]
      const list = { startsWith: options.startsWith, contentType: options.contentType, isFolder: options.folders ? undefined : false, resolveLinks: true, perPage: 100 }

      const put = async (s: ListedStory, requested: string | undefined) => {
        const locale = requested ?? s.lang
        const id = entryId(locale, s.full_path)
        const data = await ctx.parseData({ id, data: entryData(s, locale) })
        ctx.store.set({ id, data, digest: ctx.generateDigest(data) })
      }

      if (!cursor || ctx.meta.get('stamp') !== stamp) {
        ctx.logger.info(cursor ? 'blueprints or loader changed: full reload' : 'first sync: reading every published Story')
        ctx.store.clear()
        let since: number | null = null
        let n = 0
        for (const lang of langs) {
          for await (const page of client.stories({ ...list, lang })) {
            since = since === null ? page.cv : Math.min(since, page.cv)
            for (const s of page.stories) {
              await put(s, lang)
              n++
            }
          }
        }
        // The cv of the first page read: every change after it is in the feed next time (re-applying one is harmless).
        if (since === null) since = (await client.changes(undefined, 1)).cv
        ctx.meta.set('cursor', String(since))
        ctx.meta.set('stamp', stamp)
        ctx.logger.info(`${n} entries`)
        return
      }

      // Incremental: the changes after the cursor, the latest per Story.
      const latest = new Map<string, Change>()
      let next = cursor
      for (;;) {
        const page = await client.changes(next, 1000)
        for (const ch of page.changes) latest.set(ch.uuid, ch)
        next = page.cursor
        if (!page.hasMore) break
      }
      if (!latest.size) {
        ctx.meta.set('cursor', next)
        ctx.logger.info('no changes')
        return
      }
      // Every entry of a changed Story goes; those still published (and matching the filter) are read again.
      const byUuid = new Map<string, string[]>()
      for (const [id, e] of ctx.store.entries()) {
        const u = (e.data as { uuid?: string }).uuid
        if (u && latest.has(u)) byUuid.set(u, [...(byUuid.get(u) ?? []), id])
      }
      let removed = 0
      for (const ids of byUuid.values())
        for (const id of ids) {
          ctx.store.delete(id)
          removed++
        }
      const reread = [...latest.values()].filter((ch) => ch.kind === 'published' || ch.kind === 'moved').map((ch) => ch.uuid)
      let added = 0
      for (let i = 0; i < reread.length; i += 100) {
        const byUuids = reread.slice(i, i + 100)
        for (const lang of langs)
          for await (const page of client.stories({ ...list, lang, byUuids }))
            for (const s of page.stories) {
              await put(s, lang)
              added++
            }
      }
      ctx.meta.set('cursor', next)
      ctx.logger.info(`${latest.size} changed Stories: ${added} entries written, ${removed} replaced or removed`)
    },
  }
}

export interface LiveStoryFilter {
  /** The full path. */
  path?: string
  id?: string
  lang?: string
  version?: 'published' | 'draft'
}

export interface LiveCollectionFilter {
  startsWith?: string
  contentType?: string
  lang?: string
  version?: 'published' | 'draft'
}

/**
 * A live loader (Astro ≥ 5.10 with `experimental.liveContentCollections`, stable in Astro 6): Stories read on each
 * request — `getLiveEntry('stories', {path: 'blog/hello', lang: 'de'})`. Drafts with `version: 'draft'` and a preview
 * token (the loader's `previewToken`).
 */
export function liveStoryLoader(options: StoryLoaderOptions & { lang?: string } = {}): LiveLoader<Record<string, unknown>, LiveStoryFilter, LiveCollectionFilter> {
  const client = () => clientOf(options)
  return {
    name: '@content-service/astro/live',
    async loadEntry({ filter }) {
      const path = filter.path ?? filter.id?.split('/').slice(1).join('/')
      const lang = filter.lang ?? (filter.id && !filter.path ? filter.id.split('/')[0] : undefined) ?? options.lang
      if (!path) return { error: new Error('liveStoryLoader: pass {path} or {id}') }
      try {
        const { story } = await client().story(path, { lang, version: filter.version, resolveLinks: true })
        const locale = lang ?? story.lang
        return { id: entryId(locale, story.full_path), data: entryData(story as ListedStory, locale) }
      } catch (err) {
        if ((err as { status?: number }).status === 404) return undefined
        return { error: err as Error }
      }
    },
    async loadCollection({ filter }) {
      try {
        const lang = filter?.lang ?? options.lang
        const stories = await client().allStories({
          startsWith: filter?.startsWith ?? options.startsWith,
          contentType: filter?.contentType ?? options.contentType,
          isFolder: false,
          lang,
          version: filter?.version,
          resolveLinks: true,
          perPage: 100,
        })
        return { entries: stories.map((s) => ({ id: entryId(lang ?? s.lang, s.full_path), data: entryData(s, lang ?? s.lang) })) }
      } catch (err) {
        return { error: err as Error }
      }
    },
  }
}
