import { AppError, validationFailed } from '../../kernel/errors'
import { type GraphQLBuilder, type GraphQLContext, pageArgs } from '../../kernel/graphql'
import type { Kernel } from '../../kernel/kernel'
import type { ReadRequest } from '../../kernel/read'
import type { PublicSpace } from '../spaces/public'
import type { Rendered } from './cache'
import { publicPathToFullPath } from './paths'
import type { StoryReadPipeline } from './read-pipeline'
import * as repo from './repo'

/**
 * The stories module's GraphQL fields: `story` and `stories`. Every Story is served by the public read pipeline —
 * the very bytes `GET /v1/cdn/{space}/stories/{path}` answers (its cached render, parsed once) — so published-only,
 * the locale fallback chain, segment resolution (the `segment` argument stands in for the X-Service-Segment header)
 * and datasource markers behave exactly as in REST. Loads are batched: a page of N Stories costs three queries
 * (page, total, snapshots) whatever N, and `story` fields of one request share one snapshot query.
 */

export const STORIES_PAGE = { perPage: 25, max: 100 }

interface StoryMeta {
  served_segment?: string | null
  datasource_refs?: Record<string, number>
  beacon_url?: string
}

interface StoryView {
  id: number
  uuid: string
  name: string
  slug: string
  full_path: string
  lang: string
  version_no: number
  published_at: string | null
  content: unknown
  meta: StoryMeta
}

interface StoryPage {
  total: number
  page: number
  per_page: number
  items: StoryView[]
}

const SEGMENT = /^[\x21-\x7e]{1,100}$/

export function storyGraphql(builder: GraphQLBuilder, self: { pipeline: StoryReadPipeline }, kernel: Kernel) {
  const { pipeline } = self
  // A render is immutable: parse each one once, whoever asks.
  const parsed = new WeakMap<Rendered, Promise<StoryView>>()
  // Requests carrying a `segment` argument as X-Service-Segment, per GraphQL request and segment.
  const segmentRequests = new WeakMap<GraphQLContext, Map<string, Request>>()

  const viewOf = (r: Rendered): Promise<StoryView> => {
    let p = parsed.get(r)
    if (!p) {
      p = r.body.text().then((text) => {
        const { data, meta } = JSON.parse(text) as { data: Omit<StoryView, 'meta'>; meta: StoryMeta }
        return { ...data, meta }
      })
      parsed.set(r, p)
    }
    return p
  }

  const requestFor = (ctx: GraphQLContext, segment: string | null | undefined): Request => {
    if (segment === undefined || segment === null) return ctx.request
    if (!SEGMENT.test(segment)) throw validationFailed({ segment: ['must be a segment key: 1 to 100 visible ASCII characters'] })
    let map = segmentRequests.get(ctx)
    if (!map) segmentRequests.set(ctx, (map = new Map()))
    let r = map.get(segment)
    if (!r) {
      const headers = new Headers(ctx.request.headers)
      headers.set('x-service-segment', segment)
      r = new Request(ctx.request.url, { headers })
      map.set(segment, r)
    }
    return r
  }

  /** Loads (into the read cache) the snapshots of every path asked for in this tick, one query per Space. */
  const primer = (ctx: GraphQLContext) =>
    ctx.loader<{ space: PublicSpace; fullPath: string }, true>(
      'stories.snapshots',
      async (keys) => {
        const bySpace = new Map<number, { space: PublicSpace; paths: string[] }>()
        for (const k of keys) {
          const e = bySpace.get(k.space.id) ?? { space: k.space, paths: [] }
          e.paths.push(k.fullPath)
          bySpace.set(k.space.id, e)
        }
        for (const { space, paths } of bySpace.values()) await pipeline.prime(space, paths)
        return keys.map(() => true as const)
      },
      { cacheKeyFn: (k) => `${k.space.id}\u0000${k.fullPath}` },
    )

  const uuidPaths = (ctx: GraphQLContext) =>
    ctx.loader<{ space: PublicSpace; uuid: string }, string | null>(
      'stories.uuidPaths',
      async (keys) => {
        const found = new Map<string, string>()
        const bySpace = new Map<number, string[]>()
        for (const k of keys) bySpace.set(k.space.id, [...(bySpace.get(k.space.id) ?? []), k.uuid])
        for (const [spaceId, uuids] of bySpace) {
          for (const [uuid, path] of await repo.publishedPathsByUuids(kernel.db.db, spaceId, uuids)) found.set(`${spaceId}\u0000${uuid}`, path)
        }
        return keys.map((k) => found.get(`${k.space.id}\u0000${k.uuid.toLowerCase()}`) ?? null)
      },
      { cacheKeyFn: (k) => `${k.space.id}\u0000${k.uuid.toLowerCase()}` },
    )

  /** One Story through the public read pipeline; null when nothing is published there. */
  async function read(ctx: GraphQLContext, space: PublicSpace, fullPath: string, lang: string | null | undefined, segment?: string | null): Promise<StoryView | null> {
    const request = requestFor(ctx, segment)
    const req: ReadRequest = {
      spaceSlug: space.slug,
      rawPath: fullPath.slice(1),
      lang: lang ?? undefined,
      acceptLanguage: request.headers.get('accept-language'),
      origin: ctx.origin,
      request,
      clientIp: ctx.clientIp,
      viaTrustedProxy: ctx.viaTrustedProxy,
      preview: false,
    }
    try {
      const served = await pipeline.read(req)
      if (served.cacheControl) ctx.cacheHint(served.cacheControl)
      return await viewOf(served.rendered)
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return null
      throw err
    }
  }

  const StoryMetaRef = builder.objectRef<StoryMeta>('StoryMeta').implement({
    description: 'What the read steps decided, as in the REST read’s `meta`.',
    fields: (t) => ({
      served_segment: t.string({
        nullable: true,
        description: 'Key of the audience segment whose variant was served (null: the default content).',
        resolve: (m) => m.served_segment ?? null,
      }),
      datasource_refs: t.field({
        type: 'JSON',
        description: 'Datasource key → how many `$ds:` markers of that key were resolved.',
        resolve: (m) => m.datasource_refs ?? {},
      }),
      beacon_url: t.string({
        nullable: true,
        description: 'Absolute URL of the analytics beacon (null when SERVICE_BEACON_ENABLED=false).',
        resolve: (m) => m.beacon_url ?? null,
      }),
    }),
  })

  const StoryRef = builder.objectRef<StoryView>('Story').implement({
    description: 'A published Story in the locale served (after the fallback chain), as the REST read serves it.',
    fields: (t) => ({
      id: t.exposeInt('id'),
      uuid: t.exposeString('uuid'),
      name: t.exposeString('name'),
      slug: t.exposeString('slug'),
      full_path: t.exposeString('full_path', { description: 'Begins with /' }),
      lang: t.exposeString('lang', { description: 'The locale served' }),
      version_no: t.exposeInt('version_no'),
      status: t.string({ description: 'Always `published`: only published Stories are served.', resolve: () => 'published' }),
      published_at: t.string({ nullable: true, description: 'ISO 8601 UTC', resolve: (s) => s.published_at }),
      content: t.field({ type: 'JSON', description: '`{type: "doc", blocks: [...]}` with datasource markers and asset fields resolved', resolve: (s) => s.content }),
      meta: t.field({ type: StoryMetaRef, resolve: (s) => s.meta }),
    }),
  })

  const StoryPageRef = builder.objectRef<StoryPage>('StoryPage').implement({
    fields: (t) => ({
      total: t.exposeInt('total', { description: 'Published Stories matching, over all pages' }),
      page: t.exposeInt('page'),
      per_page: t.exposeInt('per_page'),
      items: t.field({ type: [StoryRef], resolve: (p) => p.items }),
    }),
  })

  const StorySort = builder.enumType('StorySort', {
    values: {
      FULL_PATH_ASC: { value: 'full_path:asc' as const },
      FULL_PATH_DESC: { value: 'full_path:desc' as const },
      PUBLISHED_AT_ASC: { value: 'published_at:asc' as const, description: 'Oldest first (then by full path)' },
      PUBLISHED_AT_DESC: { value: 'published_at:desc' as const, description: 'Newest first (then by full path)' },
    },
  })

  builder.queryField('story', (t) =>
    t.field({
      type: StoryRef,
      nullable: true,
      description:
        'A published Story by full path or by uuid (exactly one), with the locale fallback chain of the REST read. `segment` acts as the X-Service-Segment header. Null when nothing is published there.',
      args: {
        space: t.arg.string({ required: true, description: 'The Space slug' }),
        path: t.arg.string({ description: 'The full path, with or without the leading slash (e.g. `blog/hello`)' }),
        uuid: t.arg.string(),
        lang: t.arg.string({ description: 'BCP-47 tag; without it, the best Accept-Language match' }),
        segment: t.arg.string({ description: 'A previously resolved segment key (as the X-Service-Segment header)' }),
      },
      resolve: async (_root, args, ctx) => {
        if ((args.path == null) === (args.uuid == null)) throw validationFailed({ path: ['give exactly one of path and uuid'] })
        const space = await pipeline.space(args.space)
        if (!space) return null
        let fullPath: string | null
        if (args.path != null) {
          fullPath = publicPathToFullPath(args.path.startsWith('/') ? args.path.slice(1) : args.path)
        } else {
          fullPath = await uuidPaths(ctx).load({ space, uuid: args.uuid! })
        }
        if (!fullPath) return null
        await primer(ctx).load({ space, fullPath })
        return read(ctx, space, fullPath, args.lang, args.segment)
      },
    }),
  )

  builder.queryField('stories', (t) =>
    t.field({
      type: StoryPageRef,
      nullable: true,
      description:
        'A page of published Stories whose full path starts with `startsWith`, each read as by `story` (locale fallback per Story). Null for an unknown Space.',
      args: {
        space: t.arg.string({ required: true }),
        startsWith: t.arg.string({ description: 'A prefix of the full path, e.g. `/blog/` (the leading slash is optional)' }),
        page: t.arg.int({ defaultValue: 1 }),
        perPage: t.arg.int({ defaultValue: STORIES_PAGE.perPage, description: `1 to ${STORIES_PAGE.max}` }),
        lang: t.arg.string(),
        sortBy: t.arg({ type: StorySort, defaultValue: 'full_path:asc' }),
      },
      resolve: async (_root, args, ctx) => {
        const { page, perPage } = pageArgs(args, STORIES_PAGE)
        let prefix: string | null = null
        if (args.startsWith != null && args.startsWith !== '' && args.startsWith !== '/') {
          prefix = args.startsWith.startsWith('/') ? args.startsWith : `/${args.startsWith}`
          if (prefix.length > 1200 || !/^[a-z0-9_/-]+$/.test(prefix)) {
            throw validationFailed({ startsWith: ['must be a path prefix: a-z 0-9 _ - and /, at most 1200 characters'] })
          }
        }
        const space = await pipeline.space(args.space)
        if (!space) return null
        // Validates `lang` before any query.
        pipeline.chain(space, args.lang ?? undefined, ctx.request.headers.get('accept-language'))
        const { paths, total } = await repo.publishedPathsPage(kernel.db.db, space.id, {
          prefix,
          sort: args.sortBy ?? 'full_path:asc',
          limit: perPage,
          offset: (page - 1) * perPage,
        })
        await pipeline.prime(space, paths)
        const items = await Promise.all(paths.map((p) => read(ctx, space, p, args.lang)))
        return { total, page, per_page: perPage, items: items.filter((s): s is StoryView => s !== null) }
      },
    }),
  )
}
