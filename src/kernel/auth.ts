import { and, eq, isNull, lt, or } from 'drizzle-orm'
import { apiTokens, memberships, spaces } from './tables'
import { parseToken, safeEqual, sha256Hex } from './crypto'
import { forbidden, KernelErrors, notFound, unauthorized } from './errors'
import type { Kernel } from './kernel'
import { isSpaceSlug } from './schemas'

export const ROLES = ['viewer', 'editor', 'admin'] as const
export type Role = (typeof ROLES)[number]
const RANK: Record<Role, number> = { viewer: 1, editor: 2, admin: 3 }
export const roleAtLeast = (role: Role, min: Role) => RANK[role] >= RANK[min]

export type Principal =
  | {
      kind: 'user'
      tokenId: string
      tenantId: number
      userId: number
      expiresAt: Date | null
    }
  | {
      kind: 'space'
      tokenId: string
      tenantId: number
      spaceId: number
      role: Role
      userId: number | null
      expiresAt: Date | null
    }

/** The `<id>.<secret>` of `Authorization: Bearer <id>.<secret>`, or null when the header is missing or malformed. */
function bearerOf(authorization: string | null): { id: string; secret: string } | null {
  if (!authorization) return null
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
  return m ? parseToken(m[1]) : null
}

/** The principal of a token row, or null when the secret is wrong, or the token is revoked or expired. */
function principalOfRow(kernel: Pick<Kernel, 'clock'>, secret: string, row: typeof apiTokens.$inferSelect | undefined): Principal | null {
  if (!row) {
    // Same hashing work as a found token: the response time does not tell whether an id exists.
    safeEqual(sha256Hex(secret), sha256Hex('x'))
    return null
  }
  if (!safeEqual(sha256Hex(secret), row.secretHash)) return null
  const now = kernel.clock.now()
  if (row.revokedAt) return null
  if (row.expiresAt && row.expiresAt <= now) return null
  if (row.kind === 'user') {
    return { kind: 'user', tokenId: row.id, tenantId: row.tenantId, userId: row.userId!, expiresAt: row.expiresAt }
  }
  return {
    kind: 'space',
    tokenId: row.id,
    tenantId: row.tenantId,
    spaceId: row.spaceId!,
    role: row.role as Role,
    userId: row.createdBy,
    expiresAt: row.expiresAt,
  }
}

/** How stale a Space token's `last_used_at` may get: it is written at most once per this interval per token. */
export const TOKEN_USE_RESOLUTION_MS = 60_000

/**
 * Records that a Space token was used (`last_used_at`, answered in the token list), cheaply: the token's row is read
 * by every authentication anyway, so the write happens only when the stored time is a minute old or more — at most
 * one write per token per minute, whatever the traffic, on any number of instances (the update's own condition
 * makes a concurrent second write a no-op). Best effort: a failed write never fails the request.
 */
async function noteTokenUse(kernel: Pick<Kernel, 'db' | 'clock'>, row: typeof apiTokens.$inferSelect): Promise<void> {
  if (row.kind !== 'space') return
  const nowMs = kernel.clock.ms()
  if (row.lastUsedAt && nowMs - row.lastUsedAt.getTime() < TOKEN_USE_RESOLUTION_MS) return
  const staleBefore = new Date(nowMs - TOKEN_USE_RESOLUTION_MS + 1)
  try {
    await kernel.db.db
      .update(apiTokens)
      .set({ lastUsedAt: new Date(nowMs) })
      .where(and(eq(apiTokens.id, row.id), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, staleBefore))))
  } catch {}
}

/** Resolves `Authorization: Bearer <id>.<secret>`; null for a missing, malformed, unknown, revoked or expired token. */
export async function authenticate(kernel: Pick<Kernel, 'db' | 'clock'>, authorization: string | null): Promise<Principal | null> {
  const parsed = bearerOf(authorization)
  if (!parsed) return null
  const [row] = await kernel.db.db.select().from(apiTokens).where(eq(apiTokens.id, parsed.id)).limit(1)
  const principal = principalOfRow(kernel, parsed.secret, row)
  if (principal) await noteTokenUse(kernel, row)
  return principal
}

const INVALID_BEARER = 'The bearer token is invalid, expired or revoked.'

export async function requirePrincipal(kernel: Pick<Kernel, 'db' | 'clock'>, authorization: string | null): Promise<Principal> {
  const p = await authenticate(kernel, authorization)
  if (!p) throw unauthorized(authorization ? INVALID_BEARER : undefined)
  return p
}

export interface SpaceRef {
  id: number
  tenantId: number
  slug: string
  name: string
  defaultLang: string
  /** The site's preview URL (a Space setting; docs/in-page-editing.md), or null. */
  previewUrl: string | null
  archivedAt: Date | null
  createdAt: Date
  updatedAt: Date
}

/**
 * A request a guard has let in (after authentication and the Space check), offered to the modules' `admit` hooks
 * (kernel.admissions): who called, in which Space (null for routes without one), with which method and path.
 */
export interface Admission {
  method: string
  pathname: string
  principal: Principal
  space: SpaceRef | null
}

export interface SpaceAccess {
  principal: Principal
  space: SpaceRef
  role: Role
}

/**
 * The one Space guard: resolves `{space}` and the caller's role in it. No access at all answers 404 (existence is
 * not revealed); access with a lower role than `min` answers 403. With `user`, a Space-scoped token that has access
 * answers 403 `user_required` whatever its role (checked before the role, so viewer, editor and admin tokens all
 * learn the same thing: they need a user token).
 */
export async function requireSpaceAccess(
  kernel: Pick<Kernel, 'db' | 'clock'>,
  principal: Principal,
  slug: string,
  min: Role,
  opts: { user?: boolean } = {},
): Promise<SpaceAccess> {
  if (!isSpaceSlug(slug)) throw notFound('Space')
  const [space] = await kernel.db.db.select().from(spaces).where(eq(spaces.slug, slug)).limit(1)
  // Access is a membership (or a token of this very Space), not a Tenant: a user may be a member of another Tenant's
  // Space through an accepted invitation.
  if (!space) throw notFound('Space')
  let memberRole: Role | null = null
  if (principal.kind === 'user') {
    const [m] = await kernel.db.db
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.userId, principal.userId), eq(memberships.spaceId, space.id)))
      .limit(1)
    memberRole = (m?.role as Role | undefined) ?? null
  }
  return decideAccess(principal, space, memberRole, min, opts)
}

/** The Space guard's verdict once the Space (or its absence) and the user's membership role are known. */
function decideAccess(principal: Principal, space: SpaceRef | null, memberRole: Role | null, min: Role, opts: { user?: boolean }): SpaceAccess {
  if (!space) throw notFound('Space')
  const role: Role | null = principal.kind === 'space' ? (principal.spaceId === space.id ? principal.role : null) : memberRole
  if (!role) throw notFound('Space')
  if (opts.user) requireUserToken(principal)
  if (!roleAtLeast(role, min)) throw forbidden(`This action needs the ${min} role in this Space; you have ${role}.`)
  return { principal, space, role }
}

/**
 * `requirePrincipal` + `requireSpaceAccess` in one database round trip: the token, the Space of `slug` and the
 * user's membership in it are read by one query (the guards of every `/spaces/:space/...` route). Same answers in the
 * same order: 401 for a bad bearer before 404 for the Space, then 403 user_required, then 403 for the role.
 */
export async function requireBearerSpaceAccess(
  kernel: Pick<Kernel, 'db' | 'clock'>,
  authorization: string | null,
  slug: string,
  min: Role,
  opts: { user?: boolean } = {},
): Promise<SpaceAccess> {
  const parsed = bearerOf(authorization)
  if (!parsed) throw unauthorized(authorization ? INVALID_BEARER : undefined)
  if (!isSpaceSlug(slug)) {
    await requirePrincipal(kernel, authorization)
    throw notFound('Space')
  }
  const [row] = await kernel.db.db
    .select({ token: apiTokens, space: spaces, memberRole: memberships.role })
    .from(apiTokens)
    .leftJoin(spaces, eq(spaces.slug, slug))
    .leftJoin(memberships, and(eq(apiTokens.kind, 'user'), eq(memberships.userId, apiTokens.userId), eq(memberships.spaceId, spaces.id)))
    .where(eq(apiTokens.id, parsed.id))
    .limit(1)
  const principal = principalOfRow(kernel, parsed.secret, row?.token)
  if (!principal) throw unauthorized(INVALID_BEARER)
  await noteTokenUse(kernel, row.token)
  return decideAccess(principal, row.space, (row.memberRole as Role | null) ?? null, min, opts)
}

export function requireUserToken(principal: Principal): asserts principal is Extract<Principal, { kind: 'user' }> {
  if (principal.kind !== 'user') throw KernelErrors.userRequired('This endpoint accepts user tokens only, not Space-scoped tokens.')
}

