import type { GraphQLBuilder } from '../../kernel/graphql'
import { argumentHeaders, readArguments, type ReadStep, requestWithHeaders } from '../../kernel/read'
import type { PublicOverlay } from './model'
import type { OverlayReader } from './public'

type OverlayView = PublicOverlay['data'] & { path: string }

/**
 * `domOverlay(space, path, lang, ...)`: the rules `GET /cdn/{space}/dom-overlay` serves (the same cached answer), with
 * the arguments the read steps declare for their request headers (`segment`) standing in for them. An answer resolved
 * from the request's own signals is `private`, as in REST.
 */
export function overlayGraphql(builder: GraphQLBuilder, reader: OverlayReader, steps: readonly ReadStep[]) {
  const declared = readArguments(steps)
  const Rule = builder.objectRef<OverlayView['rules'][number]>('DomOverlayRule').implement({
    description: 'One DOM overlay rule as embed.js applies it.',
    fields: (t) => ({
      id: t.exposeString('id'),
      selector: t.exposeString('selector'),
      action: t.exposeString('action', { description: 'replace_text | replace_html | set_attribute | hide | insert_before | insert_after' }),
      attribute: t.exposeString('attribute', { nullable: true }),
      content: t.exposeString('content', { nullable: true }),
      priority: t.exposeInt('priority'),
    }),
  })
  const Overlay = builder.objectRef<OverlayView>('DomOverlay').implement({
    description: 'The DOM overlay rules of one page.',
    fields: (t) => ({
      path: t.exposeString('path'),
      lang: t.exposeString('lang'),
      segment: t.exposeString('segment', { nullable: true }),
      rules: t.field({ type: [Rule], resolve: (o) => o.rules }),
    }),
  })
  builder.queryField('domOverlay', (t) =>
    t.field({
      type: Overlay,
      nullable: true,
      description: 'The active DOM overlay rules for a page of a live Space, in priority order; null when the Space is unknown.',
      args: {
        space: t.arg.string({ required: true }),
        path: t.arg.string({ required: true, description: 'The page path, starting with /' }),
        lang: t.arg.string({ description: 'BCP-47 tag; a fallback chain applies (else Accept-Language)' }),
        ...Object.fromEntries(declared.map((h) => [h.argument.name, t.arg.string({ description: h.argument.description })])),
      },
      resolve: async (_root, args, ctx) => {
        const request = requestWithHeaders(ctx.request, argumentHeaders(steps, args as Record<string, unknown>))
        let served
        try {
          served = await reader.read({ spaceSlug: args.space, path: args.path, lang: args.lang ?? undefined, request, viaTrustedProxy: ctx.viaTrustedProxy })
        } catch (err) {
          if ((err as { status?: number }).status === 404) return null
          throw err
        }
        if (served.private) ctx.cacheHint('private, no-store')
        return { ...served.answer.view, path: args.path }
      },
    }),
  )
}
