import { type GraphQLBuilder, pageArgs } from '../../kernel/graphql'
import type { SearchHit } from './engine'
import type { SearchRegistry } from './registry'
import { SEARCH_PAGE, type SearchResult, searchStories } from './service'
import type { PublicSpaces } from '../spaces/public'

/**
 * The search module's GraphQL field: `search`, through searchStories (the function GET /v1/cdn/{space}/search
 * calls), so the same validation, typo tolerance and hit fields. Search answers are never cached (spec 4.4).
 */
export function searchGraphql(builder: GraphQLBuilder, self: { registry: SearchRegistry; spaces: PublicSpaces }) {
  const HitRef = builder.objectRef<SearchHit>('SearchHit').implement({
    description: 'A published Story in one locale that matched (spec 2, Search hit).',
    fields: (t) => ({
      id: t.exposeString('id', { description: 'Story id and locale, e.g. 42:en' }),
      story_id: t.exposeInt('story_id'),
      story_uuid: t.exposeString('story_uuid'),
      slug: t.exposeString('slug'),
      full_path: t.exposeString('full_path'),
      lang: t.exposeString('lang'),
      headline: t.exposeString('headline'),
      lead: t.string({ nullable: true, resolve: (h) => h.lead }),
      status: t.exposeString('status'),
      updated_at: t.exposeInt('updated_at', { description: 'When this version was published, Unix seconds' }),
    }),
  })
  const ResultRef = builder.objectRef<SearchResult>('SearchResult').implement({
    fields: (t) => ({
      hits: t.field({ type: [HitRef], resolve: (r) => r.data }),
      total: t.int({ resolve: (r) => r.meta.total }),
      page: t.int({ resolve: (r) => r.meta.page }),
      per_page: t.int({ resolve: (r) => r.meta.per_page }),
      query_time_ms: t.int({ resolve: (r) => r.meta.query_time_ms }),
    }),
  })
  builder.queryField('search', (t) =>
    t.field({
      type: ResultRef,
      nullable: true,
      description: 'Full-text search over the published Stories of a Space in one locale (default: the Space default). Null for an unknown Space. Never cached.',
      args: {
        space: t.arg.string({ required: true }),
        q: t.arg.string({ required: true }),
        lang: t.arg.string(),
        page: t.arg.int({ defaultValue: 1 }),
        perPage: t.arg.int({ defaultValue: SEARCH_PAGE.perPage, description: `1 to ${SEARCH_PAGE.max}` }),
      },
      resolve: async (_root, args, ctx) => {
        ctx.cacheHint('no-store')
        // The paging arguments are checked here, keyed as the client wrote them (perPage); the service's own check
        // names the REST query parameters (per_page).
        const { page, perPage } = pageArgs(args, SEARCH_PAGE)
        const space = await self.spaces.get(args.space)
        if (!space) return null
        return searchStories(self.registry, space, {
          q: args.q,
          lang: args.lang ?? undefined,
          page,
          per_page: perPage,
        })
      },
    }),
  )
}
