import type { FilterDeclarations } from '../../kernel/filters'

/**
 * The assets' filter hook (kernel/filters.ts): offered after the upload is received and checked (type, size,
 * dimensions) and before it is stored, with no transaction open. A handler (a plugin) may veto it; it cannot amend it.
 */
export interface AssetBeforeUpload {
  asset: {
    filename: string
    content_type: string
    size: number
    sha256: string
    width: number | null
    height: number | null
    alt: Record<string, string>
  }
}

declare module '../../kernel/filters' {
  interface FilterMap {
    'asset.before_upload': AssetBeforeUpload
  }
}

export const assetFilterHooks: FilterDeclarations = {
  'asset.before_upload': {
    description: 'Before an uploaded file is stored: its name, type, size, SHA-256, dimensions and alt texts.',
    amend: false,
    routes: ['POST /v1/spaces/{space}/assets'],
  },
}
