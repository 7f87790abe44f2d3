import { cacheShare, plainSize, ScopedCache } from '../../kernel/cache'
import type { Kernel } from '../../kernel/kernel'
import type { ReadContext, ReadStep } from '../../kernel/read'
import { RASTER_TYPES } from './model'
import { type AssetInfo, assetInfos, assetUrl } from './service'

/**
 * Asset fields of Story content, resolved on read (CDN, previews, GraphQL: they all run the read steps).
 *
 * Content stores an asset field as a reference `{uuid, ...}`. The read answers
 * `{...stored, uuid, url, transform_url, alt, width, height, mime, filename, focus, crop}`: `url` the original, `transform_url` the
 * base of image variants (`{url}.webp`, raster images only, else null; add `?w=` from IMAGE_WIDTHS), `alt` in the
 * served locale (else the Space default's; a non-empty `alt` string stored in the field itself wins). An asset that
 * does not exist in the Space (deleted, or never) resolves with every resolved field null and `missing: true`.
 *
 * A reference is recognised by shape, as content validation admits it only in asset fields: a block's field value
 * (or an item of a list that is a field value) that is an object with a uuid `uuid` and no `component`, `url` or
 * `story_uuid`. Nothing else in a document is touched.
 *
 * Cached bodies: the render key carries `as:<generation>.<Space epoch>` for Story variants that reference assets, and
 * every asset change in the Space (upload, alt/file name, delete; each instance through the event bus) bumps the
 * epoch. Like datasource markers, which variants reference assets is learned by `transform` and remembered per cached
 * Story object and key prefix; until then (first read of a snapshot) nothing is added to the key, and a body that does
 * reference assets is served but not cached. Stories without assets never carry the part, so their cached reads cost
 * one WeakMap and one Map lookup more.
 */

const MAX_PREFIXES_PER_STORY = 64
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export interface ResolvedAsset {
  uuid: string
  url: string | null
  transform_url: string | null
  alt: string | null
  width: number | null
  height: number | null
  mime: string | null
  filename: string | null
  /** The asset's focal point {x, y} (fractions), unless the field stores a `focus` of its own, which is kept. */
  focus: unknown
  /** The asset's crop {x, y, width, height} (fractions), unless the field stores a `crop` of its own. */
  crop: unknown
  missing?: true
  [stored: string]: unknown
}

type AssetKey = { spaceId: number; uuid: string }
const idOf = (spaceId: number, uuid: string) => `${spaceId}:${uuid}`
const changedAsset = (e: { spaceId: number | null; payload: { asset: { uuid: string } } }) =>
  e.spaceId === null ? null : { scope: e.spaceId, ids: [idOf(e.spaceId, e.payload.asset.uuid.toLowerCase())] }

/**
 * What Story reads know of assets, per Space: a kernel cache of asset infos (null: known not to exist) under its byte
 * share of CDN_CACHE_MB, kept fresh by the assets module's events (declared below: the runtime applies them on every
 * instance, and clears the cache on resync). The render-key part of a Space is its cache epoch, which moves with any
 * change to one of its assets and with every clear, and only grows.
 */
export class AssetRefs {
  readonly cache: ScopedCache<AssetKey, AssetInfo | null>

  constructor(private kernel: Kernel) {
    this.cache = new ScopedCache<AssetKey, AssetInfo | null>({
      name: 'assets.refs',
      scopeOf: (k) => k.spaceId,
      idOf: (k) => idOf(k.spaceId, k.uuid),
      load: async (k) => (await assetInfos(this.kernel, k.spaceId, [k.uuid]))[0] ?? null,
      now: () => kernel.clock.ms(),
      maxBytes: cacheShare(kernel.config, 1 / 32),
      sizeOf: plainSize,
      invalidateOn: { 'asset.uploaded': changedAsset, 'asset.updated': changedAsset, 'asset.deleted': changedAsset },
    })
  }

  /** The render-key part of a Space's asset state. */
  keyPart(spaceId: number): string {
    return `as:${this.cache.epoch(spaceId)}`
  }

  /** The infos of `uuids` (lower case) in the Space: from memory, the rest in one query. */
  async load(spaceId: number, uuids: string[]): Promise<Map<string, AssetInfo | null>> {
    const out = new Map<string, AssetInfo | null>()
    const now = this.kernel.clock.ms()
    const missing: string[] = []
    for (const u of uuids) {
      const hit = this.cache.peek(idOf(spaceId, u), now)
      if (hit !== undefined) out.set(u, hit)
      else missing.push(u)
    }
    if (!missing.length) return out
    // A change that lands while the query runs moves the epoch: its rows serve this read and are not stored.
    const epoch = this.cache.epoch(spaceId)
    const rows = await assetInfos(this.kernel, spaceId, missing)
    const found = new Map(rows.map((r) => [r.uuid.toLowerCase(), r]))
    for (const u of missing) {
      const info = found.get(u) ?? null
      out.set(u, info)
      this.cache.store(spaceId, idOf(spaceId, u), info, epoch)
    }
    return out
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function isAssetRef(v: unknown): v is Record<string, unknown> & { uuid: string } {
  return isObject(v) && typeof v.uuid === 'string' && UUID.test(v.uuid) && !('component' in v) && !('url' in v) && !('story_uuid' in v)
}

function isBlock(v: unknown): v is Record<string, unknown> {
  return isObject(v) && typeof v.component === 'string'
}

/** Calls `visit` on every asset reference of a document's blocks, nested ones included; it returns the replacement. */
function mapAssetRefs(blocks: unknown[], visit: (ref: Record<string, unknown> & { uuid: string }) => unknown) {
  for (const block of blocks) {
    if (!isBlock(block)) continue
    for (const key in block) {
      if (key === 'component' || key === '_uid') continue
      const v = block[key]
      if (isAssetRef(v)) block[key] = visit(v)
      else if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const item = v[i]
          if (isBlock(item)) mapAssetRefs([item], visit)
          else if (isAssetRef(item)) v[i] = visit(item)
        }
      }
    }
  }
}

function resolved(
  ref: Record<string, unknown> & { uuid: string },
  info: AssetInfo | null,
  ctx: ReadContext,
  origin: string,
): ResolvedAsset {
  const storedAlt = typeof ref.alt === 'string' && ref.alt !== '' ? ref.alt : null
  if (!info) {
    return { ...ref, uuid: ref.uuid, url: null, transform_url: null, alt: storedAlt, width: null, height: null, mime: null, filename: null, focus: ref.focus ?? null, crop: ref.crop ?? null, missing: true }
  }
  const url = assetUrl(origin, ctx.space.slug, info.uuid)
  return {
    ...ref,
    uuid: info.uuid,
    url,
    transform_url: RASTER_TYPES.has(info.mime) ? `${url}.webp` : null,
    alt: storedAlt ?? info.alt[ctx.lang] ?? info.alt[ctx.space.defaultLang] ?? null,
    width: info.width,
    height: info.height,
    mime: info.mime,
    filename: info.filename,
    // A focus or crop the editor stored in the field itself (a Storyblok-style "10x20") wins, like a stored alt.
    focus: 'focus' in ref ? ref.focus : (info.focus ?? null),
    crop: 'crop' in ref ? ref.crop : (info.crop ?? null),
  }
}

interface Decision {
  prefix: string | null
}

/** Resolved asset fields in the OpenAPI description of the public read. */
const ASSET_READ_DESCRIPTION =
  'Asset fields (stored `{uuid}`) are resolved to `{uuid, url, transform_url, alt (served locale), width, height, mime, filename, focus, crop}` (the asset’s `focus` {x, y} and `crop` {x, y, width, height}: fractions 0..1, or null; a `focus`/`crop` stored in the field is kept instead); an asset that does not exist resolves with those fields null and `missing: true` (docs/content.md).'

export function assetStep(kernel: Kernel, refs: AssetRefs): ReadStep {
  /** Per cached Story object and key prefix: whether that variant's content references assets. */
  const memo = new WeakMap<object, Map<string, boolean>>()
  const base = kernel.config.publicUrl

  return {
    name: 'assets',
    description: ASSET_READ_DESCRIPTION,
    // Decides from the remembered references and the in-memory epochs, which change only through events. Without
    // PUBLIC_URL the URLs carry the request's origin, which is part of the URL the memo is keyed by.
    vary: () => '',
    select(ctx) {
      if (ctx.req.preview) return
      const prefix = ctx.keyParts.length ? `${ctx.lang}\u0000${ctx.keyParts.join('\u0000')}` : ctx.lang
      const hasAssets = memo.get(ctx.story)?.get(prefix)
      if (hasAssets === undefined) {
        ctx.decisions.assets = { prefix } satisfies Decision
        return
      }
      if (!hasAssets) return
      ctx.keyParts.push(base ? refs.keyPart(ctx.space.id) : `${refs.keyPart(ctx.space.id)}@${ctx.req.origin}`)
    },
    async transform(ctx, draft) {
      const decision = ctx.decisions.assets as Decision | undefined
      // No reference can hide in a document without the key (a link's `story_uuid` does not match `"uuid"`).
      const doc = draft.contentJson.includes('"uuid"') ? (JSON.parse(draft.contentJson) as { blocks?: unknown }) : null
      const uuids = new Set<string>()
      if (doc && Array.isArray(doc.blocks)) {
        mapAssetRefs(doc.blocks, (ref) => {
          uuids.add(ref.uuid.toLowerCase())
          return ref
        })
      }
      if (decision?.prefix != null) {
        let byPrefix = memo.get(ctx.story)
        if (!byPrefix) memo.set(ctx.story, (byPrefix = new Map()))
        if (byPrefix.size >= MAX_PREFIXES_PER_STORY) byPrefix.clear()
        byPrefix.set(decision.prefix, uuids.size > 0)
        // The key of this read did not carry the Space's asset epoch: serve this body, but do not cache it.
        if (uuids.size) draft.cacheable = false
      }
      if (!uuids.size || !doc) return
      let infos: Map<string, AssetInfo | null>
      try {
        infos = await refs.load(ctx.space.id, [...uuids])
      } catch (err) {
        // The references stay as stored; this body is not cached, so the next read tries again.
        kernel.logger.warn('asset fields could not be resolved', { space_id: ctx.space.id, error: String(err) })
        draft.cacheable = false
        return
      }
      const origin = base ?? ctx.req.origin
      mapAssetRefs(doc.blocks as unknown[], (ref) => resolved(ref, infos.get(ref.uuid.toLowerCase()) ?? null, ctx, origin))
      draft.contentJson = JSON.stringify(doc)
    },
  }
}
