import type { GraphQLBuilder } from '../../kernel/graphql'
import type { Kernel } from '../../kernel/kernel'
import type { PublicSpace } from '../../kernel/public-space'
import type { PublicGallery } from './model'
import { type GalleryCache, renderGallery } from './public'

type GalleryView = PublicGallery['data']
type ItemView = GalleryView['items'][number]
type Chain = (space: PublicSpace, lang: string | undefined, acceptLanguage: string | null) => string[]

/**
 * `gallery(space, slug, lang)`: the same answer as `GET /cdn/{space}/galleries/{slug}` (the same cached render), so
 * the locale chain, deleted assets and transform URLs behave as in REST.
 */
export function galleryGraphql(
  builder: GraphQLBuilder,
  kernel: Kernel,
  deps: { cache: GalleryCache; spaces: { get(slug: string): PublicSpace | null | Promise<PublicSpace | null> }; chainOf: Chain },
) {
  const Transform = builder.objectRef<ItemView['transforms'][number]>('GalleryTransform').implement({
    description: 'Transform URLs of one allowed width.',
    fields: (t) => ({ width: t.exposeInt('width'), webp: t.exposeString('webp'), avif: t.exposeString('avif') }),
  })
  const Item = builder.objectRef<ItemView>('GalleryItem').implement({
    description: 'One picture of a gallery.',
    fields: (t) => ({
      assetUuid: t.exposeString('asset_uuid'),
      url: t.exposeString('url'),
      mime: t.exposeString('mime'),
      width: t.exposeInt('width', { nullable: true }),
      height: t.exposeInt('height', { nullable: true }),
      alt: t.exposeString('alt', { nullable: true }),
      caption: t.exposeString('caption', { nullable: true }),
      transforms: t.field({ type: [Transform], resolve: (i) => i.transforms }),
      srcsetWebp: t.string({ resolve: (i) => i.srcset.webp }),
      srcsetAvif: t.string({ resolve: (i) => i.srcset.avif }),
    }),
  })
  const Gallery = builder.objectRef<GalleryView>('Gallery').implement({
    description: 'A gallery in the locale served (after the fallback chain), as the REST read serves it.',
    fields: (t) => ({
      id: t.exposeString('id'),
      slug: t.exposeString('slug'),
      lang: t.exposeString('lang'),
      title: t.exposeString('title', { nullable: true }),
      items: t.field({ type: [Item], resolve: (g) => g.items }),
    }),
  })
  builder.queryField('gallery', (t) =>
    t.field({
      type: Gallery,
      nullable: true,
      description: 'A gallery of a live Space by slug; null when the Space or the gallery is unknown.',
      args: {
        space: t.arg.string({ required: true }),
        slug: t.arg.string({ required: true }),
        lang: t.arg.string({ description: 'BCP-47 tag; a fallback chain applies (else Accept-Language)' }),
      },
      resolve: async (_root, args, ctx) => {
        const space = await deps.spaces.get(args.space)
        if (!space || args.slug.length > 100) return null
        const chain = deps.chainOf(space, args.lang ?? undefined, ctx.request.headers.get('accept-language'))
        const g = await deps.cache.get(space.id, args.slug)
        if (!g) return null
        return renderGallery(g, space, chain, ctx.origin, kernel.config.imageWidths).view
      },
    }),
  )
}
