import { eq, lt } from 'drizzle-orm'
import { previewTokens } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { randomBytes, safeEqual, sha256Hex } from '../../kernel/crypto'
import { transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import type { PreviewGrant } from '../../kernel/preview'
import { PREVIEW_TOKEN_TTL_MS, type PreviewTokenView } from './model'

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')
const TOKEN = /^(p_[A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]{43})$/

/**
 * The page an editor opens: the Space's preview URL with the Story's path appended to its path and the token in the
 * fragment (a fragment never reaches the site's server, its logs or a Referer).
 */
export function previewPageUrl(previewUrl: string, path: string | undefined, token: string, space: string): string {
  const url = new URL(previewUrl)
  if (path) url.pathname = url.pathname.replace(/\/+$/, '') + path
  url.hash = `service-preview=${encodeURIComponent(token)}&space=${encodeURIComponent(space)}`
  return url.href
}

/** Mints a preview token of the caller's Space (editor+); expired tokens of every Space are pruned on the way. */
export async function mintPreviewToken(kernel: Kernel, access: SpaceAccess, input: { path?: string }): Promise<PreviewTokenView> {
  const id = `p_${b64url(randomBytes(9))}`
  const secret = b64url(randomBytes(32))
  const token = `${id}.${secret}`
  const now = kernel.clock.now()
  const expiresAt = new Date(now.getTime() + PREVIEW_TOKEN_TTL_MS)
  await transact(kernel, async (tx) => {
    await tx.delete(previewTokens).where(lt(previewTokens.expiresAt, now))
    await tx.insert(previewTokens).values({ id, spaceId: access.space.id, secretHash: sha256Hex(secret), createdBy: access.principal.userId, createdAt: now, expiresAt })
  })
  const previewUrl = access.space.previewUrl
  return {
    token,
    expires_at: expiresAt.toISOString(),
    space: access.space.slug,
    url: previewUrl ? previewPageUrl(previewUrl, input.path, token, access.space.slug) : null,
  }
}

/** The grant of a preview token, or null: malformed, unknown, wrong secret (constant-time compare) or expired. */
export async function verifyPreviewToken(kernel: Kernel, token: string): Promise<PreviewGrant | null> {
  const m = TOKEN.exec(token)
  if (!m) return null
  const [row] = await kernel.db.db.select().from(previewTokens).where(eq(previewTokens.id, m[1])).limit(1)
  // Same hashing work whether the id exists or not.
  const ok = safeEqual(sha256Hex(m[2]), row ? row.secretHash : sha256Hex('x'))
  if (!row || !ok || row.expiresAt <= kernel.clock.now()) return null
  return { tokenId: row.id, spaceId: row.spaceId, expiresAt: row.expiresAt }
}
