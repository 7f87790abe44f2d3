import { validationFailed } from '../../kernel/errors'
import { type GraphQLBuilder, pageArgs } from '../../kernel/graphql'
import type { PublicSpaces } from '../spaces/public'
import type { EntriesPageView } from './model'

const PAGE = { perPage: 25, max: 100 }

/**
 * The datasources module's GraphQL field: `datasourceEntries(space, key, page, perPage, q)`, the same entries the
 * REST listing and the `$ds:` markers serve (the in-memory copy of the current revision). Live data: answers are
 * `no-store`, so a shared cache never serves entries older than the last push or sync.
 */
export function datasourceGraphql(
  builder: GraphQLBuilder,
  self: { entries: (spaceId: number, key: string, opts: { page?: number; perPage?: number; q?: string }) => Promise<EntriesPageView | null> },
  publicSpaces: PublicSpaces,
) {
  const PageRef = builder.objectRef<EntriesPageView>('DatasourceEntryPage').implement({
    description: 'One page of a datasource’s entries.',
    fields: (t) => ({
      total: t.int({ resolve: (p) => p.meta.total }),
      page: t.int({ resolve: (p) => p.meta.page }),
      per_page: t.int({ resolve: (p) => p.meta.per_page }),
      revision: t.int({ description: 'The datasource revision these entries belong to', resolve: (p) => p.meta.revision }),
      items: t.field({ type: ['JSON'], description: 'The entries, as objects', resolve: (p) => p.data }),
    }),
  })
  builder.queryField('datasourceEntries', (t) =>
    t.field({
      type: PageRef,
      nullable: true,
      description: 'Entries of a datasource of a live Space; null when the Space or the key is unknown.',
      args: {
        space: t.arg.string({ required: true }),
        key: t.arg.string({ required: true }),
        page: t.arg.int({ defaultValue: 1 }),
        perPage: t.arg.int({ defaultValue: PAGE.perPage, description: `1 to ${PAGE.max}` }),
        q: t.arg.string({ description: 'Case-insensitive match in any string value' }),
      },
      resolve: async (_root, args, ctx) => {
        const { page, perPage } = pageArgs(args, PAGE)
        if (args.q !== null && args.q !== undefined && args.q.length > 200) throw validationFailed({ q: ['at most 200 characters'] })
        ctx.cacheHint('no-store')
        const space = await publicSpaces.get(args.space)
        if (!space) return null
        return self.entries(space.id, args.key, { page, perPage, q: args.q ?? undefined })
      },
    }),
  )
}
