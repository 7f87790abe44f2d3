import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import type { paths } from '../../api/schema'
import { queryKeys } from '../../api/keys'

export type Gallery = paths['/v1/spaces/{space}/galleries/{id}']['get']['responses'][200]['content']['application/json']['data']
export type GalleryItem = Gallery['items'][number]
export type PublicGallery = paths['/v1/cdn/{space}/galleries/{slug}']['get']['responses'][200]['content']['application/json']['data']
export const PER_PAGE = 25

export const galleryKeys = {
  all: (space: string) => queryKeys.galleries(space),
  list: (space: string, page: number) => [...galleryKeys.all(space), 'list', page] as const,
  one: (space: string, id: string) => [...galleryKeys.all(space), id] as const,
  preview: (space: string, slug: string, lang: string) => queryKeys.galleryPreview(space, slug, lang),
}

export const galleriesQuery = (space: string, page: number) =>
  queryOptions({
    queryKey: galleryKeys.list(space, page),
    queryFn: () => unwrap(api.GET('/v1/spaces/{space}/galleries', { params: { path: { space }, query: { page, per_page: PER_PAGE } } })),
  })

export const galleryQuery = (space: string, id: string) =>
  queryOptions({
    queryKey: galleryKeys.one(space, id),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/galleries/{id}', { params: { path: { space, id } } }))).data,
  })

/** The public answer, as a site reads it (anonymous; no-store so a save shows at once). */
export const publicGalleryQuery = (space: string, slug: string, lang: string) =>
  queryOptions({
    queryKey: galleryKeys.preview(space, slug, lang),
    queryFn: async () => {
      const res = await fetch(`/v1/cdn/${encodeURIComponent(space)}/galleries/${encodeURIComponent(slug)}?lang=${encodeURIComponent(lang)}`, { cache: 'no-store' })
      if (!res.ok) throw new Error(String(res.status))
      return ((await res.json()) as { data: PublicGallery }).data
    },
  })
