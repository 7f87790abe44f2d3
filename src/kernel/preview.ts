import { requirePrincipal, requireSpaceAccess } from './auth'
import { notFound, unauthorized } from './errors'
import type { Kernel } from './kernel'

/**
 * Preview tokens: short-lived, read-only bearer tokens of one Space, minted by an editor for the site preview
 * (docs/in-page-editing.md). They are not API tokens: `authenticate` (kernel/auth.ts) never accepts them, so every
 * management route answers them 401. Only draft reads accept them, through `requireDraftReader` below, which asks the
 * verifier of the one module that owns them (`previewTokens` in kernel/module.ts, handed to `kernel.previewTokens` by
 * the runtime) — the kernel names no module.
 */

/** What a valid preview token grants: drafts of one Space, until `expiresAt`. */
export interface PreviewGrant {
  tokenId: string
  spaceId: number
  expiresAt: Date
}

export interface PreviewTokenVerifier {
  /** The grant of a preview token (`p_<id>.<secret>`), or null: malformed, unknown, or expired on the kernel clock. */
  verify(token: string): Promise<PreviewGrant | null>
  /**
   * The editor's unsaved snapshot of a Story in a locale stored against this grant's token (the visual editor), or
   * null. A draft read with the token answers it in place of the saved draft.
   */
  snapshot?(grant: PreviewGrant, storyUuid: string, lang: string): Promise<{ name: string | null; content: unknown } | null>
}

/** `Authorization: Bearer p_<id>.<secret>`: the token, else null (not a preview token at all). */
export function previewBearer(authorization: string | null): string | null {
  if (!authorization) return null
  const m = /^Bearer\s+(p_\S+)\s*$/i.exec(authorization)
  return m ? m[1] : null
}

/**
 * The one check of a draft read (`?version=draft`): a preview token of this Space, or any bearer with at least viewer
 * access to it. A preview token that is invalid or expired answers 401; a valid one of another Space answers 404, as
 * no access does everywhere. Answers the preview token's grant (null for any other bearer).
 */
export async function requireDraftReader(
  kernel: Pick<Kernel, 'db' | 'clock' | 'previewTokens'>,
  authorization: string | null,
  space: { id: number; slug: string },
): Promise<PreviewGrant | null> {
  const preview = previewBearer(authorization)
  if (preview !== null) {
    const grant = kernel.previewTokens ? await kernel.previewTokens.verify(preview) : null
    if (!grant) throw unauthorized('The preview token is invalid or expired: open the preview again from the editor.')
    if (grant.spaceId !== space.id) throw notFound('Space')
    return grant
  }
  const principal = await requirePrincipal(kernel, authorization)
  await requireSpaceAccess(kernel, principal, space.slug, 'viewer')
  return null
}
