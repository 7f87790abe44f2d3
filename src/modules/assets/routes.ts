import { Elysia, t } from 'elysia'
import { publicOrigin } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data, Paged, SpaceParams } from '../../kernel/schemas'
import { AssetListQuery, AssetModel, AssetParams, SignBody, SignedUrlModel, UpdateAssetBody } from './model'
import { deleteAsset, getAsset, listAssets, signTransformUrl, updateAsset, uploadAsset, uploadTmpDir } from './service'
import { receiveUpload } from './upload'

const NoContent = t.Void({ description: 'No content' })

/** `scheme://host[:port]` for the URLs handed out: PUBLIC_URL, else the request's own origin. */
export function originFor(kernel: Kernel, request: Request) {
  return publicOrigin(kernel.config, request.url)
}

/** Spec 4.8: upload, list, show, update and delete assets. */
export function assetRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space/assets', tags: ['Assets'] })
    .use(guards)
    .post(
      '',
      async ({ access, request, set }) => {
        const upload = await receiveUpload(request, kernel.config.assetMaxBytes, uploadTmpDir(kernel))
        set.status = 201
        return { data: await uploadAsset(kernel, access, upload, originFor(kernel, request)) }
      },
      {
        params: SpaceParams,
        spaceRole: 'editor',
        response: { 201: Data(AssetModel) },
        detail: {
          summary: 'Upload a file (multipart/form-data, at most 100 MB)',
          description:
            'Parts: `file` (required), `filename` (else the part’s file name), `alt` (a JSON map locale → text) or `alt[<locale>]` parts; locales must be Space locales. ' +
            'The body streams to disk while SHA-256 runs over it, then into the asset store (ASSET_STORE: Postgres in 1 MiB rows, or an S3-compatible bucket, multipart). The type comes from the leading bytes, never from the client: ' +
            'JPEG, PNG, WebP, GIF, AVIF, PDF, MP4, WebM, MP3, and SVG when it parses as SVG; anything else is 415 `unsupported_media_type`. ' +
            'A Content-Length over the cap is 413 at once, a chunked body is cut at the cap with 413; an image over 50 megapixels is 422 `image_too_large`. Emits `asset.uploaded`.',
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  required: ['file'],
                  properties: {
                    file: { type: 'string', format: 'binary' },
                    filename: { type: 'string', maxLength: 255 },
                    alt: { type: 'string', description: 'JSON object: locale → alt text' },
                  },
                },
              },
            },
          },
        },
      },
    )
    .get('', async ({ access, query, request }) => listAssets(kernel, access, query, originFor(kernel, request)), {
      params: SpaceParams,
      query: AssetListQuery,
      spaceRole: 'viewer',
      response: Paged(AssetModel),
      detail: { summary: 'Assets of the Space, newest first (`q`: filename substring, `content_type`: exact or `image/*`)' },
    })
    .get('/:asset', async ({ access, params, request }) => ({ data: await getAsset(kernel, access, params.asset, originFor(kernel, request)) }), {
      params: AssetParams,
      spaceRole: 'viewer',
      response: Data(AssetModel),
      detail: { summary: 'One asset (an asset of another Space: 404)' },
    })
    .patch(
      '/:asset',
      async ({ access, params, body, request }) => ({ data: await updateAsset(kernel, access, params.asset, body, originFor(kernel, request)) }),
      {
        params: AssetParams,
        body: UpdateAssetBody,
        spaceRole: 'editor',
        response: Data(AssetModel),
        detail: {
          summary: 'Rename, change alt texts (merged per locale; a null removes that locale), or set an image’s focal point and crop',
          description:
            '`focus` {x, y} and `crop` {x, y, width, height} are fractions 0..1 of the (EXIF-oriented) image; null clears them. ' +
            'A crop must stay inside the image and have an area (422 naming `crop/width`/`crop/height`); on a file that is not an image both are 422. ' +
            'Transforms apply the crop first, and `fit=cover` with both `w` and `h` cuts its window centred on the focal point, clamped inside the image. ' +
            'Variants made before the change are not served for the new values: the focal point and crop are part of each variant’s cache key and ETag.',
        },
      },
    )
    .delete(
      '/:asset',
      async ({ access, params, set }) => {
        await deleteAsset(kernel, access, params.asset)
        set.status = 204
      },
      {
        params: AssetParams,
        spaceRole: 'editor',
        response: { 204: NoContent },
        detail: { summary: 'Delete the asset: its bytes, and its cached variants on every instance' },
      },
    )
    .post(
      '/:asset/signed-url',
      async ({ access, params, body, request }) => ({ data: await signTransformUrl(kernel, access, params.asset, body, originFor(kernel, request)) }),
      {
        params: AssetParams,
        body: SignBody,
        spaceRole: 'viewer',
        response: Data(SignedUrlModel),
        detail: {
          summary: 'A signed transform URL for a size outside IMAGE_WIDTHS',
          description: 'The `s=` parameter is an HMAC of the asset, format, w, h, fit and q; the URL works for any size 1–8192. Not an image: 404.',
        },
      },
    )
}
