import { Elysia, t } from 'elysia'
import { KernelErrors } from '../../kernel/errors'
import { publicOrigin } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { answerHeaders, cacheControls, conditionalAnswer } from '../../kernel/public-answer'
import type { PublicSpace } from '../../kernel/public-space'
import { Data, Paged, SpaceParams } from '../../kernel/schemas'
import { GalleryBody, GalleryListQuery, GalleryModel, GalleryParams, MAX_ITEMS, PublicGalleryModel, PublicGalleryParams, PublicGalleryQuery } from './model'
import { type GalleryCache, renderGallery } from './public'
import { createGallery, deleteGallery, getGallery, listGalleries, updateGallery } from './service'

const NoContent = t.Void({ description: 'No content' })

const BODY_RULES = `\`slug\` unique in the Space (409 slug_taken). \`title\`, \`items[].caption\` and \`items[].alt\` are locale maps whose keys must be locales of the Space. \`items\`: at most ${MAX_ITEMS}, each an image asset of this Space (422 naming \`items/<index>/asset_uuid\` otherwise); \`alt\` left out for a locale falls back to the asset's own alt text.`

/** Galleries (issue 30): viewer+ reads, editor+ writes. */
export function galleryRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space/galleries', tags: ['Galleries'] })
    .use(guards)
    .get('', ({ access, query }) => listGalleries(kernel, access, query), {
      params: SpaceParams,
      query: GalleryListQuery,
      spaceRole: 'viewer',
      response: Paged(GalleryModel),
      detail: { summary: 'List galleries, newest first', description: '`per_page` 1–100 (default 25), `page` from 1; `meta.total` counts them all.' },
    })
    .post(
      '',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createGallery(kernel, access, body) }
      },
      {
        params: SpaceParams,
        body: GalleryBody,
        spaceRole: 'editor',
        response: { 201: Data(GalleryModel) },
        detail: { summary: 'Create a gallery', description: `${BODY_RULES} Emits \`gallery.created\`.` },
      },
    )
    .get('/:id', async ({ access, params }) => ({ data: await getGallery(kernel, access, params.id) }), {
      params: GalleryParams,
      spaceRole: 'viewer',
      response: Data(GalleryModel),
      detail: { summary: 'One gallery' },
    })
    .put('/:id', async ({ access, params, body }) => ({ data: await updateGallery(kernel, access, params.id, body) }), {
      params: GalleryParams,
      body: GalleryBody,
      spaceRole: 'editor',
      response: Data(GalleryModel),
      detail: { summary: 'Replace a gallery', description: `${BODY_RULES} Emits \`gallery.updated\`.` },
    })
    .delete(
      '/:id',
      async ({ access, params, set }) => {
        await deleteGallery(kernel, access, params.id)
        set.status = 204
      },
      {
        params: GalleryParams,
        spaceRole: 'editor',
        response: { 204: NoContent },
        detail: { summary: 'Delete a gallery', description: 'The public read answers 404 from now on. Emits `gallery.deleted`.' },
      },
    )
}

const PUBLIC_DESCRIPTION =
  'Anonymous, 600/min/IP. The title, captions and alt texts in the locale fallback chain of `lang` (else the best Accept-Language match; then the tag’s explicit fallback, its language, the Space default); an item without alt text in the chain takes the asset’s own. ' +
  'Each item answers the original’s `url`, `mime`, `width` and `height`, and `transforms`: ready-made transform URLs (`{url}.webp?w=` and `{url}.avif?w=`) for the widths of IMAGE_WIDTHS up to the original’s width, as `srcset` strings too. ' +
  'Items whose asset was deleted are left out. Strong `ETag` (If-None-Match → 304), `Cache-Control: public, max-age=CDN_MAX_AGE, stale-while-revalidate=CDN_STALE_WHILE_REVALIDATE`, `Vary: Accept-Language`.'

type Chain = (space: PublicSpace, lang: string | undefined, acceptLanguage: string | null) => string[]

/** `GET /cdn/{space}/galleries/{slug}`. */
export function galleryCdnRoutes(kernel: Kernel, guards: Guards, cache: GalleryCache, chainOf: Chain) {
  const cacheControl = cacheControls(kernel.config).public
  const widths = kernel.config.imageWidths
  return new Elysia({ prefix: '/cdn/:space/galleries', tags: ['Public read'] }).use(guards).get(
    '/:slug',
    async ({ space, origin, params, query, request }) => {
      const chain = chainOf(space, query.lang, request.headers.get('accept-language'))
      const g = await cache.get(space.id, params.slug)
      if (!g) throw KernelErrors.notFound('Gallery not found.')
      const r = renderGallery(g, space, chain, origin ?? publicOrigin(kernel.config, request.url), widths)
      // Content-Language on the 304 too: the gallery's locale is part of what the cache revalidates.
      const h = answerHeaders(r.etag, { cacheControl, vary: 'Accept-Language', headers: { 'Content-Language': r.view.lang } })
      return conditionalAnswer(request, r.etag, r.body, h.ok, h.notModified)
    },
    {
      publicSpace: { notFound: 'Gallery' },
      params: PublicGalleryParams,
      query: PublicGalleryQuery,
      response: { 200: PublicGalleryModel },
      detail: {
        summary: 'A gallery by slug, with image sizes and transform URLs',
        description: PUBLIC_DESCRIPTION,
        responses: { 304: { description: 'Not modified (If-None-Match matched the ETag)' } },
      },
    },
  )
}
