import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { assetCdnRoutes } from './cdn'
import { assetEvents } from './events'
import { assetFilterHooks } from './hooks'
import { ImageService } from './images'
import { AssetErrors } from './model'
import { AssetRefs, assetStep } from './read-step'
import { assetRoutes } from './routes'
import { removeStaleUploads, uploadTmpDir } from './service'
import { registerStoreJobs, sharedVariants, stores } from './store'

/**
 * Assets (spec 2, 4.2, 4.8): uploads checked by their bytes and kept in Postgres or an S3-compatible bucket
 * (store.ts), public delivery of originals, and image variants transformed in Workers and cached on local disk.
 */
export const assetsModule = defineModule({
  name: 'assets',
  setup: (kernel) => ({ images: new ImageService(kernel, sharedVariants(kernel)), refs: new AssetRefs(kernel) }),
  start: async (_self, kernel) => {
    // The transform Workers start at the first transform (ImageService.warm): an instance pays for them once it serves images.
    // Temporary upload files left by a process that stopped mid-upload.
    if (!kernel.config.memoryDb) await removeStaleUploads(uploadTmpDir(kernel), kernel.clock.ms())
    // The bucket answers with these keys (a warning, not a refusal: the store may be back before the first upload).
    const s3 = stores(kernel).s3
    if (s3) {
      await s3.client.list({ prefix: s3.prefix, maxKeys: 1 }).then(
        () => kernel.logger.info('asset store', { store: kernel.config.assetStore, bucket: s3.config.bucket, prefix: s3.prefix, endpoint: s3.config.endpoint ?? 'AWS S3' }),
        (err) => kernel.logger.warn('the S3 bucket did not answer a listing: check S3_ENDPOINT, S3_BUCKET, S3_REGION and the keys', { bucket: s3.config.bucket, error: String(err) }),
      )
    }
  },
  close: (self) => self.images.close(),
  // The S3 store's object deletions and orphan sweeper.
  jobs: (_jobs, _self, kernel) => registerStoreJobs(kernel),
  routes: ({ kernel, guards }) => assetRoutes(kernel, guards),
  publicRoutes: ({ kernel, guards, self }) => assetCdnRoutes(kernel, guards, self.images),
  errors: Object.values(AssetErrors),
  events: assetEvents,
  filterHooks: assetFilterHooks,
  on: {
    'asset.deleted': (e, self) => {
      self.images.dropAsset(e.payload.asset.uuid)
    },
  },
  // What Story reads know of assets: invalidated by the asset events it declares, cleared on resync.
  caches: (self) => [self.refs.cache],
  // Asset fields of Story content resolved to URLs, alt text and sizes (CDN, previews, GraphQL).
  readSteps: (self, kernel) => [assetStep(kernel, self.refs)],
  rateLimits: [
    // 4.8 and 4.2
    { id: 'assets.upload', method: 'POST', path: '/v1/spaces/:space/assets', limit: 30, windowSeconds: MIN },
    { id: 'cdn.assets', method: 'GET', path: '/v1/cdn/:space/assets/:file', limit: 600, windowSeconds: MIN },
  ],
})
