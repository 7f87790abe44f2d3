import { keepPreviousData, queryOptions } from '@tanstack/react-query'
import { getToken } from '../auth'
import { type ApiError, ApiFailure, api, notifyUnauthorized, unwrap } from './client'
import type { paths } from './schema'
import { queryKeys } from './keys'

/** An asset as the management API answers it. */
export type Asset = paths['/v1/spaces/{space}/assets']['get']['responses'][200]['content']['application/json']['data'][number]

export const ASSETS_PER_PAGE = 48

/** One page of the Space's assets, newest first (`page` from 1). */
export const assetsQuery = (space: string, q: string, contentType?: string, page = 1) =>
  queryOptions({
    queryKey: queryKeys.assetList(space, { q, contentType, page }),
    queryFn: async () =>
      unwrap(
        api.GET('/v1/spaces/{space}/assets', {
          params: { path: { space }, query: { per_page: ASSETS_PER_PAGE, page, ...(q ? { q } : {}), ...(contentType ? { content_type: contentType } : {}) } },
        }),
      ),
    placeholderData: keepPreviousData,
  })

export const assetQuery = (space: string, uuid: string) =>
  queryOptions({
    queryKey: queryKeys.asset(space, uuid),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/assets/{asset}', { params: { path: { space, asset: uuid } } }))).data,
    retry: (count, error) => !(error instanceof ApiFailure && error.status === 404) && count < 2,
  })

/** What the transform route decodes (anything else has no variants: the original is shown, or a file icon). */
const RASTER = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif'])
export const isRaster = (a: Pick<Asset, 'content_type'>) => RASTER.has(a.content_type)

/** The public path of the original (same origin: the CSP's img-src 'self'). */
export const originalPath = (space: string, uuid: string) => `/v1/cdn/${encodeURIComponent(space)}/assets/${uuid}`

export const TRANSFORM_FORMATS = ['webp', 'avif', 'jpg', 'png'] as const
export type TransformFormat = (typeof TRANSFORM_FORMATS)[number]
/** Widths from the service's default IMAGE_WIDTHS (other sizes need a signed URL). */
export const PREVIEW_WIDTHS = [128, 384, 640, 1200] as const

/** A transform URL (`.webp?w=256`): the width must be one of IMAGE_WIDTHS. */
export const transformPath = (space: string, uuid: string, format: TransformFormat, w?: number) =>
  `${originalPath(space, uuid)}.${format}${w ? `?w=${w}` : ''}`

/** The thumbnail of an asset: a 256 px WebP for raster images, the original for SVG, else null. */
export function thumbnailPath(space: string, a: Pick<Asset, 'uuid' | 'content_type'>): string | null {
  if (isRaster(a)) return transformPath(space, a.uuid, 'webp', 256)
  if (a.content_type === 'image/svg+xml') return originalPath(space, a.uuid)
  return null
}

/** A size in bytes as people read it, in the UI's language (Intl): `812 B`, `1.5 KB`, `3.2 MB`. */
export function formatBytes(n: number): string {
  const lang = typeof document === 'undefined' ? 'en' : document.documentElement.lang || 'en'
  const unit = n < 1024 ? 'byte' : n < 1024 * 1024 ? 'kilobyte' : 'megabyte'
  const value = n < 1024 ? n : n < 1024 * 1024 ? n / 1024 : n / 1024 / 1024
  return new Intl.NumberFormat(lang, { style: 'unit', unit, unitDisplay: 'short', maximumFractionDigits: n < 1024 ? 0 : 1, minimumFractionDigits: n < 1024 ? 0 : 1 }).format(value)
}

/**
 * Uploads one file with progress (fetch has no upload progress: XMLHttpRequest does). The same bearer token and 401
 * handling as the typed client; the answer is the asset, or an ApiFailure with the shared error body.
 */
export function uploadAsset(space: string, file: File, onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<Asset> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', `/v1/spaces/${encodeURIComponent(space)}/assets`)
    const token = getToken()
    if (token) xhr.setRequestHeader('Authorization', `Bearer ${token}`)
    xhr.responseType = 'text'
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total)
    }
    xhr.onload = () => {
      let body: unknown = null
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : null
      } catch {}
      if (xhr.status === 201 || xhr.status === 200) {
        onProgress(1)
        return resolve((body as { data: Asset }).data)
      }
      if (xhr.status === 401 && token) notifyUnauthorized()
      const b = (body ?? {}) as Partial<ApiError>
      reject(
        new ApiFailure(xhr.status, {
          error: b.error ?? 'error',
          message: b.message ?? `The server answered ${xhr.status}.`,
          errors: b.errors,
          request_id: b.request_id,
        }),
      )
    }
    xhr.onerror = () => reject(new ApiFailure(0, { error: 'network', message: 'The server cannot be reached. Check your connection and try again.' }))
    xhr.onabort = () => reject(new ApiFailure(0, { error: 'aborted', message: 'The upload was cancelled.' }))
    signal?.addEventListener('abort', () => xhr.abort())
    const form = new FormData()
    form.append('file', file, file.name)
    xhr.send(form)
  })
}
