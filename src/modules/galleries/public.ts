import { ScopedCache, cacheShare, plainSize } from '../../kernel/cache'
import type { Kernel } from '../../kernel/kernel'
import { etagOf } from '../../kernel/public-answer'
import type { PublicSpace } from '../../kernel/public-space'
import { type AssetInfo, assetInfos, assetUrl, focusVersion } from '../assets/service'
import type { PublicGallery } from './model'
import { type GalleryRow, galleryBySlug } from './service'

/** A gallery as the public read keeps it: the row, its assets as they are now, and its rendered answers. */
export interface LiveGallery {
  row: GalleryRow
  /** Assets of the items by lower-case uuid; a deleted asset is absent (its items are left out of the answer). */
  assets: Map<string, AssetInfo>
  /** Rendered bodies by locale chain and origin (bounded). */
  renders: Map<string, RenderedGallery>
  /** Tells the cache that holds it that its renders grew or shrank by `delta` bytes (its byte budget counts them). */
  grew?(delta: number): void
}

/** Estimated bytes of a render: the body string, the view it was made from (about as large), the key. */
const renderBytes = (key: string, r: RenderedGallery) => r.body.length * 4 + key.length * 2 + 128

export interface RenderedGallery {
  view: PublicGallery['data']
  body: string
  etag: string
}

const MAX_GALLERIES = 10_000
const MAX_RENDERS = 32
const TTL_MS = 10 * 60_000

/**
 * Public galleries by (Space, slug). The entry holds the gallery's assets too, so the cache is dropped per Space
 * whenever a gallery or an asset of the Space changes (upload, alt text, delete; on every instance through the event
 * bus): a deleted asset leaves the public answer at once. Assets are read through the assets module's service.
 */
export class GalleryCache {
  readonly cache: ScopedCache<{ spaceId: number; slug: string }, LiveGallery | null>

  constructor(private kernel: Kernel) {
    this.cache = new ScopedCache({
      name: 'galleries',
      scopeOf: (k) => k.spaceId,
      idOf: (k) => `${k.spaceId}:${k.slug}`,
      load: (k) => this.load(k.spaceId, k.slug),
      now: () => kernel.clock.ms(),
      ttlMs: TTL_MS,
      maxEntries: MAX_GALLERIES,
      maxBytes: cacheShare(kernel.config, 1 / 16),
      sizeOf: plainSize,
      maxNegatives: 1_000,
      invalidateOn: {
        'gallery.created': (e) => e.spaceId,
        'gallery.updated': (e) => e.spaceId,
        'gallery.deleted': (e) => e.spaceId,
        'asset.uploaded': (e) => e.spaceId,
        'asset.updated': (e) => e.spaceId,
        'asset.deleted': (e) => e.spaceId,
        'space.archived': (e) => e.spaceId,
      },
    })
  }

  get(spaceId: number, slug: string): LiveGallery | null | Promise<LiveGallery | null> {
    return this.cache.get({ spaceId, slug })
  }

  private async load(spaceId: number, slug: string): Promise<LiveGallery | null> {
    const row = await galleryBySlug(this.kernel, spaceId, slug)
    if (!row) return null
    const uuids = [...new Set(row.items.map((i) => i.asset_uuid))]
    const assets = new Map((await assetInfos(this.kernel, spaceId, uuids)).map((a) => [a.uuid.toLowerCase(), a]))
    const g: LiveGallery = { row, assets, renders: new Map() }
    g.grew = (delta) => this.cache.resize(`${spaceId}:${slug}`, g, delta)
    return g
  }
}

/** The first text of a locale map along the chain; null when none of its locales has one. */
export function inChain(map: Record<string, string> | undefined, chain: readonly string[]): string | null {
  if (!map) return null
  for (const c of chain) {
    const v = map[c]
    if (v !== undefined && v !== '') return v
  }
  return null
}

const RASTER = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif'])

/** Allowed widths up to the original's; the smallest allowed one for an image narrower than all of them. */
export function srcsetWidths(allowed: readonly number[], width: number | null): number[] {
  const sorted = [...allowed].sort((a, b) => a - b)
  if (width === null) return sorted
  const fit = sorted.filter((w) => w <= width)
  return fit.length ? fit : sorted.slice(0, 1)
}

/** The public answer of a gallery in a locale chain, rendered once per chain and origin. */
export function renderGallery(g: LiveGallery, space: PublicSpace, chain: readonly string[], origin: string, widths: readonly number[]): RenderedGallery {
  const key = `${chain.join(',')}\u0000${origin}`
  const hit = g.renders.get(key)
  if (hit) return hit
  const items: PublicGallery['data']['items'] = []
  for (const item of g.row.items) {
    const a = g.assets.get(item.asset_uuid)
    if (!a) continue // deleted since the gallery was saved
    const url = assetUrl(origin, space.slug, a.uuid)
    const ws = RASTER.has(a.mime) ? srcsetWidths(widths, a.width) : []
    // `v` names the focal point and crop: a change gives new URLs, so caches never keep the old cut.
    const ver = focusVersion(a.focus, a.crop)
    const v = ver ? `&v=${ver}` : ''
    const transforms = ws.map((w) => ({ width: w, webp: `${url}.webp?w=${w}${v}`, avif: `${url}.avif?w=${w}${v}` }))
    items.push({
      asset_uuid: a.uuid,
      url,
      mime: a.mime,
      width: a.width,
      height: a.height,
      focus: a.focus ?? null,
      crop: a.crop ?? null,
      alt: inChain(item.alt, chain) ?? inChain(a.alt, chain),
      caption: inChain(item.caption, chain),
      transforms,
      srcset: {
        webp: transforms.map((x) => `${x.webp} ${x.width}w`).join(', '),
        avif: transforms.map((x) => `${x.avif} ${x.width}w`).join(', '),
      },
    })
  }
  const view = { id: g.row.uuid, slug: g.row.slug, lang: chain[0] ?? space.defaultLang, title: inChain(g.row.title, chain), items }
  const body = JSON.stringify({ data: view })
  const etag = etagOf(body)
  const rendered = { view, body, etag }
  let delta = renderBytes(key, rendered)
  if (g.renders.size >= MAX_RENDERS) {
    for (const [k, v] of g.renders) delta -= renderBytes(k, v)
    g.renders.clear()
  }
  g.renders.set(key, rendered)
  g.grew?.(delta)
  return rendered
}
