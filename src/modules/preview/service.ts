import { and, eq, lt, not, sql } from 'drizzle-orm'
import { previewSnapshots, previewTokens } from './tables'
import { conflict, KernelErrors, notFound, validationFailed } from '../../kernel/errors'
import type { SpaceAccess } from '../../kernel/auth'
import { randomBytes, safeEqual, sha256Hex } from '../../kernel/crypto'
import { transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import type { PreviewGrant } from '../../kernel/preview'
import { MAX_SNAPSHOT_BLOCKS, MAX_SNAPSHOT_BYTES, MAX_SNAPSHOT_DEPTH, MAX_SNAPSHOTS_PER_TOKEN, PREVIEW_TOKEN_TTL_MS, type PreviewTokenView, type SnapshotView } from './model'

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

/**
 * Stores the editor's unsaved content of one Story and locale against a preview token (the visual editor's tier 3):
 * a draft read with that token answers it in place of the saved draft until the token expires. Never a version,
 * never published. Only the user that minted the token (createdBy), in the token's Space, while it lives, may write it;
 * anything else answers 404 (a token of another Space, an expired or unknown one).
 */
export async function putSnapshot(
  kernel: Kernel,
  access: SpaceAccess,
  tokenId: string,
  input: { story_uuid: string; lang: string; name?: string; content: unknown },
): Promise<SnapshotView> {
  const now = kernel.clock.now()
  const [token] = await kernel.db.db.select().from(previewTokens).where(eq(previewTokens.id, tokenId)).limit(1)
  if (!token || token.spaceId !== access.space.id || token.expiresAt <= now || (token.createdBy ?? null) !== (access.principal.userId ?? null)) {
    throw notFound('Preview token')
  }
  const problem = docProblem(input.content)
  if (problem) throw validationFailed({ [problem.path]: [problem.message] })
  const json = JSON.stringify(input.content)
  const bytes = Buffer.byteLength(json)
  if (bytes > MAX_SNAPSHOT_BYTES) throw KernelErrors.payloadTooLarge(`A snapshot holds at most ${MAX_SNAPSHOT_BYTES} bytes of content; this one has ${bytes}.`)
  const storyUuid = input.story_uuid.toLowerCase()
  await transact(kernel, async (tx) => {
    const [{ n }] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(previewSnapshots)
      .where(and(eq(previewSnapshots.tokenId, tokenId), not(and(eq(previewSnapshots.storyUuid, storyUuid), eq(previewSnapshots.lang, input.lang))!)))
    if (n >= MAX_SNAPSHOTS_PER_TOKEN) throw conflict(`A preview token holds snapshots of at most ${MAX_SNAPSHOTS_PER_TOKEN} Stories and locales: open the preview again.`)
    const values = { tokenId, storyUuid, lang: input.lang, name: input.name ?? null, content: input.content, bytes, updatedAt: now }
    await tx
      .insert(previewSnapshots)
      .values(values)
      .onConflictDoUpdate({ target: [previewSnapshots.tokenId, previewSnapshots.storyUuid, previewSnapshots.lang], set: { name: values.name, content: values.content, bytes, updatedAt: now } })
  })
  return { story_uuid: storyUuid, lang: input.lang, bytes, expires_at: token.expiresAt.toISOString() }
}

/** The snapshot of a Story and locale stored against a (verified) token, or null. */
export async function snapshotOf(kernel: Kernel, grant: PreviewGrant, storyUuid: string, lang: string): Promise<{ name: string | null; content: unknown } | null> {
  if (grant.expiresAt <= kernel.clock.now()) return null
  const [row] = await kernel.db.db
    .select({ name: previewSnapshots.name, content: previewSnapshots.content })
    .from(previewSnapshots)
    .where(and(eq(previewSnapshots.tokenId, grant.tokenId), eq(previewSnapshots.storyUuid, storyUuid.toLowerCase()), eq(previewSnapshots.lang, lang)))
    .limit(1)
  return row ?? null
}

/** Why `content` is not a document the read can render (its shape only: the editor's unsaved values may be incomplete). */
function docProblem(content: unknown): { path: string; message: string } | null {
  if (!content || typeof content !== 'object' || Array.isArray(content) || (content as { type?: unknown }).type !== 'doc') {
    return { path: 'content', message: "must be a document: {type: 'doc', blocks: [...]}" }
  }
  const blocks = (content as { blocks?: unknown }).blocks
  if (!Array.isArray(blocks)) return { path: 'content/blocks', message: 'must be an array of blocks' }
  let count = 0
  const stack: [unknown[], string, number][] = [[blocks, 'content/blocks', 1]]
  while (stack.length) {
    const [list, path, depth] = stack.pop()!
    if (depth > MAX_SNAPSHOT_DEPTH) return { path, message: `blocks nest at most ${MAX_SNAPSHOT_DEPTH} levels` }
    for (let i = 0; i < list.length; i++) {
      const b = list[i] as Record<string, unknown>
      const at = `${path}/${i}`
      if (!b || typeof b !== 'object' || Array.isArray(b)) return { path: at, message: 'must be a block (an object)' }
      if (typeof b._uid !== 'string' || !b._uid || b._uid.length > 64) return { path: `${at}/_uid`, message: 'must be a string of 1 to 64 characters' }
      if (typeof b.component !== 'string' || !/^[a-z][a-z0-9_-]{0,63}$/.test(b.component)) return { path: `${at}/component`, message: 'must be a blueprint name' }
      if (++count > MAX_SNAPSHOT_BLOCKS) return { path: 'content/blocks', message: `at most ${MAX_SNAPSHOT_BLOCKS} blocks` }
      for (const [k, v] of Object.entries(b)) {
        if (Array.isArray(v) && v.length && v.every((x) => x && typeof x === 'object' && !Array.isArray(x) && 'component' in x)) stack.push([v, `${at}/${k}`, depth + 1])
      }
    }
  }
  return null
}
