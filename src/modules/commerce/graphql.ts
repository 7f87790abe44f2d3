import { validationFailed } from '../../kernel/errors'
import { type GraphQLBuilder, pageArgs } from '../../kernel/graphql'
import type { Kernel } from '../../kernel/kernel'
import type { PublicSpaces } from '../spaces/public'
import type { PublicProductView } from './model'
import { publicProduct, publicProductList } from './public'
import type { ListSeek } from '../../kernel/list-seek'

const PAGE = { perPage: 25, max: 100 }

/**
 * The shop's GraphQL fields: `products(space, page, perPage, q, lang)` and `product(space, slug, lang)`, the same
 * views the public REST routes serve (active products only, `inStock` but never the count).
 */
export function commerceGraphql(builder: GraphQLBuilder, kernel: Kernel, publicSpaces: PublicSpaces, listSeek: ListSeek<string>) {
  const Image = builder.objectRef<PublicProductView['images'][number]>('ProductImage').implement({
    fields: (t) => ({
      uuid: t.exposeString('uuid'),
      url: t.exposeString('url'),
      transformUrl: t.string({ nullable: true, description: 'Base of image variants (add ?w=)', resolve: (i) => i.transform_url }),
      width: t.int({ nullable: true, resolve: (i) => i.width }),
      height: t.int({ nullable: true, resolve: (i) => i.height }),
      alt: t.string({ nullable: true, resolve: (i) => i.alt }),
    }),
  })
  const Product = builder.objectRef<PublicProductView>('Product').implement({
    description: 'An active product of a shop, in the locale asked for.',
    fields: (t) => ({
      id: t.exposeString('id'),
      slug: t.exposeString('slug'),
      lang: t.exposeString('lang'),
      name: t.exposeString('name'),
      description: t.string({ nullable: true, resolve: (p) => p.description }),
      price: t.int({ description: 'Integer minor units', resolve: (p) => p.price }),
      currency: t.exposeString('currency'),
      inStock: t.boolean({ resolve: (p) => p.in_stock }),
      images: t.field({ type: [Image], resolve: (p) => p.images }),
      attributes: t.field({ type: 'JSON', resolve: (p) => p.attributes }),
    }),
  })
  const Page = builder.objectRef<{ data: PublicProductView[]; meta: { total: number; page: number; per_page: number } }>('ProductPage').implement({
    fields: (t) => ({
      total: t.int({ resolve: (p) => p.meta.total }),
      page: t.int({ resolve: (p) => p.meta.page }),
      per_page: t.int({ resolve: (p) => p.meta.per_page }),
      items: t.field({ type: [Product], resolve: (p) => p.data }),
    }),
  })
  const checkText = (name: string, v: string | null | undefined, max: number) => {
    if (v !== null && v !== undefined && v.length > max) throw validationFailed({ [name]: [`at most ${max} characters`] })
  }
  builder.queryField('products', (t) =>
    t.field({
      type: Page,
      nullable: true,
      description: 'Active products of a live Space, by slug; null when the Space is unknown.',
      args: {
        space: t.arg.string({ required: true }),
        page: t.arg.int({ defaultValue: 1 }),
        perPage: t.arg.int({ defaultValue: PAGE.perPage, description: `1 to ${PAGE.max}` }),
        q: t.arg.string({ description: 'Case-insensitive match in slug or name' }),
        lang: t.arg.string({ description: 'BCP-47 tag; the Story locale fallback applies' }),
      },
      resolve: async (_root, args, ctx) => {
        const { page, perPage } = pageArgs(args, PAGE)
        checkText('q', args.q, 200)
        checkText('lang', args.lang, 35)
        const space = await publicSpaces.get(args.space)
        if (!space) return null
        return publicProductList(kernel, listSeek, space, { page, per_page: perPage, q: args.q ?? undefined, lang: args.lang ?? undefined }, ctx.request.headers.get('accept-language'), ctx.origin)
      },
    }),
  )
  builder.queryField('product', (t) =>
    t.field({
      type: Product,
      nullable: true,
      description: 'One active product by slug; null when the Space or the product is unknown.',
      args: {
        space: t.arg.string({ required: true }),
        slug: t.arg.string({ required: true }),
        lang: t.arg.string({ description: 'BCP-47 tag; the Story locale fallback applies' }),
      },
      resolve: async (_root, args, ctx) => {
        checkText('slug', args.slug, 100)
        checkText('lang', args.lang, 35)
        const space = await publicSpaces.get(args.space)
        if (!space) return null
        return publicProduct(kernel, space, args.slug, args.lang ?? undefined, ctx.request.headers.get('accept-language'), ctx.origin)
      },
    }),
  )
}
