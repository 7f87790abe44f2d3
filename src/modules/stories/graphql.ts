import { AppError, validationFailed } from '../../kernel/errors'
import { type GraphQLBuilder, type GraphQLContext, pageArgs } from '../../kernel/graphql'
import type { Kernel } from '../../kernel/kernel'
import type { ReadRequest, ReadStep, StoryMeta } from '../../kernel/read'
import type { PublicSpace } from '../spaces/public'
import type { Rendered } from './cache'
import { declaredMeta, type PublicStoryView } from './model'
import { pathPrefixOf, publicPathToFullPath } from './paths'
import type { StoryReadPipeline } from './read-pipeline'
import * as repo from './repo'

/**
 * The stories module's GraphQL fields: `story` and `stories`. Every Story is served by the public read pipeline —
 * the very bytes `GET /v1/cdn/{space}/stories/{path}` answers (its cached render, parsed once) — so published-only,
 * the locale fallback chain, segment resolution (the `segment` argument stands in for the X-Service-Segment header)
 * and datasource markers behave exactly as in REST. Loads are batched: a page of N Stories costs three queries
 * (page, total, snapshots) whatever N, and `story` fields of one request share one snapshot query.
 *
 * The `StoryMeta` type is made of the fields the registered read steps declare (kernel/read.ts `ReadStepMeta`).
 */

export const STORIES_PAGE = { perPage: 25, max: 100 }

interface StoryPage {
  total: number
  page: number
  per_page: number
  items: PublicStoryView[]
}

const SEGMENT = /^[\x21-\x7e]{1,100}$/

export function storyGraphql(builder: GraphQLBuilder, self: { pipeline: StoryReadPipeline }, kernel: Kernel) {
  const types = storyTypes(builder, kernel.readSteps)
  const reader = new PublicStoryReader(kernel, self.pipeline)
  storyQueryField(builder, types, reader)
  storiesQueryField(builder, types, reader)
}

// ---- Types ----

type StoryTypes = ReturnType<typeof storyTypes>

/** `StoryMeta` from the read steps' declarations, in step order; null when no step declares any entry. */
function storyMetaType(builder: GraphQLBuilder, steps: readonly ReadStep[]) {
  const metas = declaredMeta(steps)
  if (!metas.length) return null
  return builder.objectRef<StoryMeta>('StoryMeta').implement({
    description: 'What the read steps decided, as in the REST read’s `meta`.',
    fields: (t) => Object.assign({}, ...metas.map((m) => m.graphql(t))),
  })
}

/** The output types of `story` and `stories`. */
function storyTypes(builder: GraphQLBuilder, steps: readonly ReadStep[]) {
  const StoryMetaRef = storyMetaType(builder, steps)

  const Story = builder.objectRef<PublicStoryView>('Story').implement({
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
      ...(StoryMetaRef ? { meta: t.field({ type: StoryMetaRef, resolve: (s) => s.meta }) } : {}),
    }),
  })

  const StoryPage = builder.objectRef<StoryPage>('StoryPage').implement({
    fields: (t) => ({
      total: t.exposeInt('total', { description: 'Published Stories matching, over all pages' }),
      page: t.exposeInt('page'),
      per_page: t.exposeInt('per_page'),
      items: t.field({ type: [Story], resolve: (p) => p.items }),
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

  return { Story, StoryPage, StorySort }
}

// ---- Reading through the public pipeline ----

/** Reads Stories for resolvers through the public read pipeline, with the per-request loaders that batch it. */
class PublicStoryReader {
  /** A render is immutable: parse each one once, whoever asks. */
  private readonly parsed = new WeakMap<Rendered, Promise<PublicStoryView>>()
  /** Requests carrying a `segment` argument as X-Service-Segment, per GraphQL request and segment. */
  private readonly segmentRequests = new WeakMap<GraphQLContext, Map<string, Request>>()

  constructor(
    private readonly kernel: Kernel,
    readonly pipeline: StoryReadPipeline,
  ) {}

  /** One Story through the public read pipeline; null when nothing is published there. */
  async read(
    ctx: GraphQLContext,
    space: PublicSpace,
    fullPath: string,
    lang: string | null | undefined,
    segment?: string | null,
  ): Promise<PublicStoryView | null> {
    try {
      const served = await this.pipeline.read(this.readRequest(ctx, space, fullPath, lang, segment))
      if (served.cacheControl) ctx.cacheHint(served.cacheControl)
      return await this.viewOf(served.rendered)
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return null
      throw err
    }
  }

  /** A page of a Space's published Stories under `prefix`: one query for the page and total, one for the snapshots. */
  async readPage(
    ctx: GraphQLContext,
    space: PublicSpace,
    q: { prefix: string | null; sort: repo.PublishedSort; page: number; perPage: number; lang: string | null | undefined },
  ): Promise<StoryPage> {
    const { paths, total } = await this.kernel.replicas.read(space.id, (db) =>
      repo.publishedPathsPage(db, space.id, {
        prefix: q.prefix,
        sort: q.sort,
        limit: q.perPage,
        offset: (q.page - 1) * q.perPage,
      }),
    )
    await this.pipeline.prime(space, paths)
    const items = await Promise.all(paths.map((p) => this.read(ctx, space, p, q.lang)))
    return { total, page: q.page, per_page: q.perPage, items: items.filter((s): s is PublicStoryView => s !== null) }
  }

  /** Loads (into the read cache) the snapshots of every path asked for in this tick, one query per Space. */
  prime(ctx: GraphQLContext, space: PublicSpace, fullPath: string): Promise<true> {
    return ctx
      .loader<{ space: PublicSpace; fullPath: string }, true>(
        'stories.snapshots',
        async (keys) => {
          for (const { space, paths } of groupBySpace(keys, (k) => k.fullPath)) await this.pipeline.prime(space, paths)
          return keys.map(() => true as const)
        },
        { cacheKeyFn: (k) => `${k.space.id}\u0000${k.fullPath}` },
      )
      .load({ space, fullPath })
  }

  /** The full path of a published Story by uuid (null: none), the uuids asked for in this tick in one query per Space. */
  pathOfUuid(ctx: GraphQLContext, space: PublicSpace, uuid: string): Promise<string | null> {
    const keyOf = (spaceId: number, uuid: string) => `${spaceId}\u0000${uuid.toLowerCase()}`
    return ctx
      .loader<{ space: PublicSpace; uuid: string }, string | null>(
        'stories.uuidPaths',
        async (keys) => {
          const found = new Map<string, string>()
          for (const { space, paths: uuids } of groupBySpace(keys, (k) => k.uuid)) {
            for (const [uuid, path] of await this.kernel.replicas.read(space.id, (db) => repo.publishedPathsByUuids(db, space.id, uuids))) found.set(keyOf(space.id, uuid), path)
          }
          return keys.map((k) => found.get(keyOf(k.space.id, k.uuid)) ?? null)
        },
        { cacheKeyFn: (k) => keyOf(k.space.id, k.uuid) },
      )
      .load({ space, uuid })
  }

  private readRequest(ctx: GraphQLContext, space: PublicSpace, fullPath: string, lang: string | null | undefined, segment?: string | null): ReadRequest {
    const request = this.requestFor(ctx, segment)
    return {
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
  }

  /** The GraphQL request itself, or (with a `segment` argument) a copy carrying it as X-Service-Segment. */
  private requestFor(ctx: GraphQLContext, segment: string | null | undefined): Request {
    if (segment === undefined || segment === null) return ctx.request
    if (!SEGMENT.test(segment)) throw validationFailed({ segment: ['must be a segment key: 1 to 100 visible ASCII characters'] })
    let map = this.segmentRequests.get(ctx)
    if (!map) this.segmentRequests.set(ctx, (map = new Map()))
    let r = map.get(segment)
    if (!r) {
      const headers = new Headers(ctx.request.headers)
      headers.set('x-service-segment', segment)
      r = new Request(ctx.request.url, { headers })
      map.set(segment, r)
    }
    return r
  }

  private viewOf(r: Rendered): Promise<PublicStoryView> {
    let p = this.parsed.get(r)
    if (!p) {
      p = r.body.text().then((text) => {
        const { data, meta } = JSON.parse(text) as { data: Omit<PublicStoryView, 'meta'>; meta: StoryMeta }
        return { ...data, meta }
      })
      this.parsed.set(r, p)
    }
    return p
  }
}

/** Keys of one batch grouped by Space (in first-seen order), with the value each key asks for. */
function groupBySpace<K extends { space: PublicSpace }>(keys: readonly K[], valueOf: (k: K) => string) {
  const bySpace = new Map<number, { space: PublicSpace; paths: string[] }>()
  for (const k of keys) {
    const e = bySpace.get(k.space.id) ?? { space: k.space, paths: [] }
    e.paths.push(valueOf(k))
    bySpace.set(k.space.id, e)
  }
  return bySpace.values()
}

// ---- Query fields ----

/** `story(space, path | uuid, lang, segment)`. */
function storyQueryField(builder: GraphQLBuilder, types: StoryTypes, reader: PublicStoryReader) {
  builder.queryField('story', (t) =>
    t.field({
      type: types.Story,
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
        const space = await reader.pipeline.space(args.space)
        if (!space) return null
        const fullPath = args.path != null ? fullPathOfArg(args.path) : await reader.pathOfUuid(ctx, space, args.uuid!)
        if (!fullPath) return null
        await reader.prime(ctx, space, fullPath)
        return reader.read(ctx, space, fullPath, args.lang, args.segment)
      },
    }),
  )
}

/** The `path` argument as a full path (null when it cannot name a Story). */
function fullPathOfArg(path: string): string | null {
  return publicPathToFullPath(path.startsWith('/') ? path.slice(1) : path)
}

/** `stories(space, startsWith, page, perPage, lang, sortBy)`. */
function storiesQueryField(builder: GraphQLBuilder, types: StoryTypes, reader: PublicStoryReader) {
  const { pipeline } = reader
  builder.queryField('stories', (t) =>
    t.field({
      type: types.StoryPage,
      nullable: true,
      description:
        'A page of published Stories whose full path starts with `startsWith`, each read as by `story` (locale fallback per Story). Null for an unknown Space.',
      args: {
        space: t.arg.string({ required: true }),
        startsWith: t.arg.string({ description: 'A prefix of the full path, e.g. `/blog/` (the leading slash is optional)' }),
        page: t.arg.int({ defaultValue: 1 }),
        perPage: t.arg.int({ defaultValue: STORIES_PAGE.perPage, description: `1 to ${STORIES_PAGE.max}` }),
        lang: t.arg.string(),
        sortBy: t.arg({ type: types.StorySort, defaultValue: 'full_path:asc' }),
      },
      resolve: async (_root, args, ctx) => {
        const { page, perPage } = pageArgs(args, STORIES_PAGE)
        const prefix = pathPrefixOf(args.startsWith, 'startsWith')
        const space = await pipeline.space(args.space)
        if (!space) return null
        // Validates `lang` before any query.
        pipeline.chain(space, args.lang ?? undefined, ctx.request.headers.get('accept-language'))
        return reader.readPage(ctx, space, { prefix, sort: args.sortBy ?? 'full_path:asc', page, perPage, lang: args.lang })
      },
    }),
  )
}
