import type { GraphQLBuilder } from '../../kernel/graphql'
import type { PublicSpace, PublicSpaces } from './public'

/** The spaces module's GraphQL field: `space(slug)` with its locales, from the public surface's Space cache. */
export function spaceGraphql(builder: GraphQLBuilder, self: { publicSpaces: PublicSpaces }) {
  const LocaleRef = builder.objectRef<{ code: string; fallback: string | null }>('Locale').implement({
    fields: (t) => ({
      code: t.exposeString('code', { description: 'BCP-47 tag' }),
      fallback: t.string({ nullable: true, description: 'The explicit fallback locale, if any', resolve: (l) => l.fallback }),
    }),
  })
  const SpaceRef = builder.objectRef<PublicSpace>('Space').implement({
    description: 'A live Space, as the public read surface sees it.',
    fields: (t) => ({
      slug: t.exposeString('slug'),
      name: t.exposeString('name'),
      default_lang: t.exposeString('defaultLang'),
      locales: t.field({
        type: [LocaleRef],
        description: 'In display order; the default locale is one of them',
        resolve: (s) => s.codes.map((code) => ({ code, fallback: s.fallbacks.get(code) ?? null })),
      }),
    }),
  })
  builder.queryField('space', (t) =>
    t.field({
      type: SpaceRef,
      nullable: true,
      description: 'A live Space by slug; null when unknown or archived.',
      args: { slug: t.arg.string({ required: true }) },
      resolve: (_root, args) => self.publicSpaces.get(args.slug),
    }),
  )
}
