import type { EventDeclarations } from '../../kernel/events'

/** docs/webhooks.md: `asset: {uuid, filename, content_type, size, alt}`. */
export interface AssetUploadedPayload {
  asset: { uuid: string; filename: string; content_type: string; size: number; alt: Record<string, string> }
}

/** Internal: an asset was deleted; every instance drops its cached variants. */
export interface AssetDeletedPayload {
  /** `size`: the bytes the asset held (usage counting). */
  asset: { uuid: string; size: number }
}

/** Internal: an asset's alt text or file name changed; every instance drops what its Story reads remember of it. */
export interface AssetUpdatedPayload {
  asset: { uuid: string }
}

declare module '../../kernel/events' {
  interface EventMap {
    'asset.uploaded': AssetUploadedPayload
    'asset.deleted': AssetDeletedPayload
    'asset.updated': AssetUpdatedPayload
  }
}

const ASSET_FIELDS = ['uuid', 'filename', 'content_type', 'size', 'alt'] as const

export const assetEvents: EventDeclarations = {
  'asset.uploaded': {
    description: 'An asset upload completed.',
    webhook: (p) => ({ asset: Object.fromEntries(ASSET_FIELDS.map((f) => [f, (p as AssetUploadedPayload).asset?.[f] ?? null])) }),
    body: `\`asset: {${ASSET_FIELDS.join(', ')}}\` (\`alt\`: locale → text, \`size\` in bytes)`,
  },
  'asset.deleted': { description: 'Internal: an asset was deleted (cached variants are dropped on every instance).' },
  'asset.updated': { description: 'Internal: an asset\'s alt text or file name changed (Story reads resolve asset fields anew).' },
}
