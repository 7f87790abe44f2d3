import { type GraphQLBuilder, pageArgs } from '../../kernel/graphql'
import type { PublicSpaces } from '../spaces/public'
import type { Kernel } from '../../kernel/kernel'
import type { PublicEventView } from './model'
import { chainOf, publicEvents, publicEventView, publishedEvent } from './public'
import type { ListSeek } from '../../kernel/list-seek'

const PAGE = { perPage: 20, max: 100 }

/**
 * The events module's GraphQL fields: `events(space, from, to, lang, page, perPage)` and `event(space, slug, lang)`,
 * the same answers as the public REST reads (published events, locale chain, spots_left and registration_open now).
 */
export function eventGraphql(builder: GraphQLBuilder, kernel: Kernel, publicSpaces: PublicSpaces, listSeek: ListSeek<[string, number]>) {
  const Location = builder.objectRef<PublicEventView['location']>('EventLocation').implement({
    fields: (t) => ({
      name: t.exposeString('name'),
      address: t.exposeString('address', { nullable: true }),
      url: t.exposeString('url', { nullable: true }),
    }),
  })
  const EventRef = builder.objectRef<PublicEventView>('Event').implement({
    description: 'A published event, texts in the chosen locale.',
    fields: (t) => ({
      slug: t.exposeString('slug'),
      lang: t.exposeString('lang'),
      title: t.exposeString('title'),
      description: t.exposeString('description', { nullable: true }),
      starts_at: t.exposeString('starts_at'),
      ends_at: t.exposeString('ends_at'),
      timezone: t.exposeString('timezone'),
      location: t.field({ type: Location, resolve: (e) => e.location }),
      capacity: t.exposeInt('capacity', { nullable: true }),
      spots_left: t.exposeInt('spots_left', { nullable: true, description: 'null when unlimited' }),
      waitlist: t.exposeBoolean('waitlist'),
      registration_open: t.exposeBoolean('registration_open'),
      registration_closes_at: t.exposeString('registration_closes_at', { nullable: true }),
      fields: t.field({ type: 'JSON', nullable: true, description: 'JSON Schema of the extra registration fields', resolve: (e) => e.fields }),
    }),
  })
  const Page = builder.objectRef<{ data: PublicEventView[]; meta: { total: number; page: number; per_page: number } }>('EventPage').implement({
    fields: (t) => ({
      total: t.int({ resolve: (p) => p.meta.total }),
      page: t.int({ resolve: (p) => p.meta.page }),
      per_page: t.int({ resolve: (p) => p.meta.per_page }),
      items: t.field({ type: [EventRef], resolve: (p) => p.data }),
    }),
  })
  builder.queryField('events', (t) =>
    t.field({
      type: Page,
      nullable: true,
      description: 'Published events of a live Space, soonest first: ending at or after `from` (default now), starting before `to`. null when the Space is unknown.',
      args: {
        space: t.arg.string({ required: true }),
        from: t.arg.string({ description: 'YYYY-MM-DD or an ISO 8601 instant' }),
        to: t.arg.string({ description: 'YYYY-MM-DD or an ISO 8601 instant' }),
        lang: t.arg.string(),
        page: t.arg.int({ defaultValue: 1 }),
        perPage: t.arg.int({ defaultValue: PAGE.perPage, description: `1 to ${PAGE.max}` }),
      },
      resolve: async (_root, args, ctx) => {
        const { page, perPage } = pageArgs(args, PAGE)
        const space = await publicSpaces.get(args.space)
        if (!space) return null
        const chain = chainOf(space, args.lang ?? undefined, ctx.request.headers.get('accept-language'))
        return publicEvents(kernel, listSeek, space, { from: args.from ?? undefined, to: args.to ?? undefined, page, per_page: perPage }, chain)
      },
    }),
  )
  builder.queryField('event', (t) =>
    t.field({
      type: EventRef,
      nullable: true,
      description: 'One published event by slug; null when the Space or the event is unknown.',
      args: { space: t.arg.string({ required: true }), slug: t.arg.string({ required: true }), lang: t.arg.string() },
      resolve: async (_root, args, ctx) => {
        const space = await publicSpaces.get(args.space)
        if (!space || args.slug.length > 100) return null
        const chain = chainOf(space, args.lang ?? undefined, ctx.request.headers.get('accept-language'))
        const row = await publishedEvent(kernel, space.id, args.slug)
        return row ? publicEventView(row, chain, kernel.clock.ms()) : null
      },
    }),
  )
}
