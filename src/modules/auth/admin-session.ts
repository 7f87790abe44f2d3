import { and, eq, inArray, isNull, like, lt, ne, or } from 'drizzle-orm'
import { apiTokens, users } from '../../kernel/tables'
import type { Principal } from '../../kernel/auth'
import { issueToken, randomBytes, safeEqual, sha256Hex } from '../../kernel/crypto'
import { unauthorized } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import type { Tx } from '../../kernel/db'
import type { Kernel } from '../../kernel/kernel'
import { adminSessions } from './tables'
import { AuthErrors, type AdminSessionTokenView, type AdminSessionView } from './model'

/**
 * The admin app's shared sign-in (admin/README.md "Signing in across tabs"). A revocable session whose
 * `<id>.<secret>` lives in an HttpOnly, SameSite=Strict cookie scoped to {@link ADMIN_SESSION_PATH}; it is never
 * authentication by itself: a tab trades it (with {@link ADMIN_SESSION_HEADER}) for a short-lived bearer token.
 */
export const ADMIN_SESSION_COOKIE = 'cs_admin_session'
export const ADMIN_SESSION_PATH = '/v1/auth/admin-session'
/** The header the exchange and the sign-out need: a cross-site form cannot send it, cross-origin script not without a preflight the server refuses. */
export const ADMIN_SESSION_HEADER = 'x-admin-session'
/** Sliding lifetime: each exchange moves the end to 14 days later ... */
export const ADMIN_SESSION_IDLE_MS = 14 * 86_400_000
/** ... but never beyond 90 days after the sign-in. */
export const ADMIN_SESSION_MAX_MS = 90 * 86_400_000
/** The life of a bearer token minted from a session (the app renews it a minute before it runs out). */
export const ADMIN_TOKEN_TTL_MS = 15 * 60_000
/** `api_tokens.name` of a token minted from session `<id>`. */
const MINTED_PREFIX = 'admin-session:'

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')
const COOKIE_VALUE = /^(as_[A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]{43})$/

/** The session's cookie value from a Cookie header (the first one of that name), or null. */
export function adminSessionCookie(cookieHeader: string | null): string | null {
  if (!cookieHeader || cookieHeader.length > 8192) return null
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    if (part.slice(0, eq).trim() === ADMIN_SESSION_COOKIE) return part.slice(eq + 1).trim()
  }
  return null
}

/**
 * The Set-Cookie header for `value` (null: clear it). `Secure` when the service is reached over https (PUBLIC_URL, the
 * request, or a trusted proxy's X-Forwarded-Proto); over plain http (a local install on http://localhost) it is left
 * off, or browsers that refuse Secure cookies on http would drop it.
 */
export function adminSessionSetCookie(value: string | null, secure: boolean, maxAgeMs = ADMIN_SESSION_IDLE_MS): string {
  const parts = [
    `${ADMIN_SESSION_COOKIE}=${value ?? ''}`,
    `Path=${ADMIN_SESSION_PATH}`,
    `Max-Age=${value ? Math.floor(maxAgeMs / 1000) : 0}`,
    'HttpOnly',
    'SameSite=Strict',
  ]
  if (secure) parts.push('Secure')
  return parts.join('; ')
}

/** Whether the request reached the service over https (see {@link adminSessionSetCookie}). */
export function reachedOverHttps(kernel: Kernel, request: Request, viaTrustedProxy: boolean): boolean {
  if (kernel.config.publicUrl?.startsWith('https:')) return true
  if (request.url.startsWith('https:')) return true
  return viaTrustedProxy && request.headers.get('x-forwarded-proto')?.split(',')[0].trim().toLowerCase() === 'https'
}

/** Refuses a request without `X-Admin-Session: 1` (403 `admin_session_header_required`). */
export function assertAdminSessionHeader(request: Request): void {
  if (request.headers.get(ADMIN_SESSION_HEADER) !== '1') {
    throw AuthErrors.adminSessionHeaderRequired('This call needs the header X-Admin-Session: 1 (the admin app sends it).')
  }
}

const sessionGone = () => unauthorized('The admin session is missing, expired or signed out: sign in again.')

/** The session a minted token belongs to (from its name), or null. */
function sessionOfTokenName(name: string | null): string | null {
  return name?.startsWith(MINTED_PREFIX) ? name.slice(MINTED_PREFIX.length) : null
}

/**
 * Opens an admin session for the signed-in user (a login token; a token minted from a session cannot open another).
 * `previous`: the cookie the request carried, ended when it is a session of the same user (a new sign-in replaces it).
 */
export async function openAdminSession(
  kernel: Kernel,
  principal: Extract<Principal, { kind: 'user' }>,
  previous: string | null,
): Promise<{ cookie: string; view: AdminSessionView }> {
  const [token] = await kernel.db.db.select({ name: apiTokens.name }).from(apiTokens).where(eq(apiTokens.id, principal.tokenId)).limit(1)
  if (sessionOfTokenName(token?.name ?? null)) {
    throw AuthErrors.adminSessionRefused('An admin session is opened with the token of a sign-in, not with one minted from an admin session.')
  }
  const id = `as_${b64url(randomBytes(9))}`
  const secret = b64url(randomBytes(32))
  const now = kernel.clock.now()
  const expiresAt = new Date(now.getTime() + ADMIN_SESSION_IDLE_MS)
  await transact(kernel, async (tx, emit) => {
    const old = previous ? COOKIE_VALUE.exec(previous) : null
    if (old) {
      const [row] = await tx.select().from(adminSessions).where(eq(adminSessions.id, old[1])).limit(1)
      if (row && row.userId === principal.userId && safeEqual(sha256Hex(old[2]), row.secretHash)) await endSessionsTx(kernel, tx, emit, [row.id], principal.userId)
    }
    await tx.insert(adminSessions).values({
      id,
      secretHash: sha256Hex(secret),
      userId: principal.userId,
      loginTokenId: principal.tokenId,
      createdAt: now,
      lastUsedAt: now,
      expiresAt,
    })
  })
  return { cookie: `${id}.${secret}`, view: { expires_at: expiresAt.toISOString() } }
}

/**
 * Trades a session's cookie for a bearer token of 15 minutes and moves the session's end to 14 days later (never past
 * 90 days after sign-in). A missing, malformed, unknown, wrong or expired cookie: 401 (an expired row is deleted).
 */
export async function exchangeAdminSession(kernel: Kernel, cookie: string | null): Promise<{ view: AdminSessionTokenView; sessionExpiresAt: Date }> {
  const m = cookie ? COOKIE_VALUE.exec(cookie) : null
  if (!m) throw sessionGone()
  const db = kernel.db.db
  const [row] = await db.select().from(adminSessions).where(eq(adminSessions.id, m[1])).limit(1)
  // The hash is compared even for an unknown id, so the answer's timing does not tell which ids exist.
  const ok = safeEqual(sha256Hex(m[2]), row?.secretHash ?? '0'.repeat(64))
  if (!row || !ok) throw sessionGone()
  const now = kernel.clock.now()
  if (row.expiresAt.getTime() <= now.getTime()) {
    await transact(kernel, (tx, emit) => endSessionsTx(kernel, tx, emit, [row.id], row.userId))
    throw sessionGone()
  }
  const [user] = await db.select({ id: users.id, email: users.email, name: users.name, tenantId: users.tenantId }).from(users).where(eq(users.id, row.userId)).limit(1)
  if (!user) throw sessionGone()
  const t = issueToken('u')
  const tokenExpiresAt = new Date(now.getTime() + ADMIN_TOKEN_TTL_MS)
  const sessionExpiresAt = new Date(Math.min(now.getTime() + ADMIN_SESSION_IDLE_MS, row.createdAt.getTime() + ADMIN_SESSION_MAX_MS))
  const name = `${MINTED_PREFIX}${row.id}`
  await db.transaction(async (tx) => {
    await tx.update(adminSessions).set({ lastUsedAt: now, expiresAt: sessionExpiresAt }).where(eq(adminSessions.id, row.id))
    // Minted tokens of this session that ran out are of no use to anyone: they go, so the table does not grow by four rows an hour per tab.
    await tx.delete(apiTokens).where(and(eq(apiTokens.userId, user.id), eq(apiTokens.name, name), lt(apiTokens.expiresAt, now)))
    await tx.insert(apiTokens).values({
      id: t.id,
      secretHash: t.secretHash,
      kind: 'user',
      tenantId: user.tenantId,
      userId: user.id,
      name,
      createdAt: now,
      expiresAt: tokenExpiresAt,
    })
  })
  return {
    view: { token: t.token, expires_at: tokenExpiresAt.toISOString(), user: { id: user.id, email: user.email, name: user.name } },
    sessionExpiresAt,
  }
}

/** Ends the session of this cookie (when it is one): its row goes, its minted tokens are revoked. Answers nothing either way. */
export async function closeAdminSession(kernel: Kernel, cookie: string | null): Promise<void> {
  const m = cookie ? COOKIE_VALUE.exec(cookie) : null
  if (!m) return
  const [row] = await kernel.db.db.select().from(adminSessions).where(eq(adminSessions.id, m[1])).limit(1)
  if (!row || !safeEqual(sha256Hex(m[2]), row.secretHash)) return
  await transact(kernel, (tx, emit) => endSessionsTx(kernel, tx, emit, [row.id], row.userId))
}

/** Deletes the sessions and revokes the bearer tokens minted from them (their live streams end). */
async function endSessionsTx(kernel: Kernel, tx: Tx, emit: Emit, ids: string[], userId: number): Promise<void> {
  if (!ids.length) return
  await tx.delete(adminSessions).where(inArray(adminSessions.id, ids))
  const revoked = await tx
    .update(apiTokens)
    .set({ revokedAt: kernel.clock.now() })
    .where(
      and(
        eq(apiTokens.userId, userId),
        inArray(
          apiTokens.name,
          ids.map((id) => `${MINTED_PREFIX}${id}`),
        ),
        isNull(apiTokens.revokedAt),
      ),
    )
    .returning({ id: apiTokens.id })
  if (revoked.length) emit({ type: 'session.revoked', spaceId: null, payload: { user_id: userId, token_ids: revoked.map((r) => r.id) } })
}

/**
 * A sign-out with a bearer token (`POST /v1/auth/logout`): the admin session it opened (a login token) or was minted
 * from ends too, so every tab of the admin signs out even when the cookie's own sign-out call never arrives.
 */
export async function endAdminSessionsOfToken(kernel: Kernel, tx: Tx, emit: Emit, userId: number, tokenId: string): Promise<void> {
  const [token] = await tx.select({ name: apiTokens.name }).from(apiTokens).where(eq(apiTokens.id, tokenId)).limit(1)
  const minted = sessionOfTokenName(token?.name ?? null)
  const rows = await tx
    .select({ id: adminSessions.id })
    .from(adminSessions)
    .where(and(eq(adminSessions.userId, userId), or(eq(adminSessions.loginTokenId, tokenId), minted ? eq(adminSessions.id, minted) : undefined)))
  await endSessionsTx(
    kernel,
    tx,
    emit,
    rows.map((r) => r.id),
    userId,
  )
}

/**
 * Every admin session of a user ends (sign out everywhere, password reset), but the one `keep` belongs to (`keep`:
 * the token of a password change, whose own tabs stay signed in). Minted tokens are revoked by the caller's sweep of
 * user tokens; this deletes the rows.
 */
export async function endAdminSessionsOfUser(tx: Tx, userId: number, keep: string | null): Promise<void> {
  let keepSession: string | null = null
  if (keep) {
    const [token] = await tx.select({ name: apiTokens.name }).from(apiTokens).where(eq(apiTokens.id, keep)).limit(1)
    keepSession = sessionOfTokenName(token?.name ?? null)
    if (!keepSession) {
      const [opened] = await tx.select({ id: adminSessions.id }).from(adminSessions).where(eq(adminSessions.loginTokenId, keep)).limit(1)
      keepSession = opened?.id ?? null
    }
  }
  await tx.delete(adminSessions).where(and(eq(adminSessions.userId, userId), keepSession ? ne(adminSessions.id, keepSession) : undefined))
}

/** Deletes sessions that ran out (the daily prune). */
export async function pruneAdminSessions(kernel: Kernel): Promise<number> {
  const rows = await kernel.db.db.delete(adminSessions).where(lt(adminSessions.expiresAt, kernel.clock.now())).returning({ id: adminSessions.id })
  // Minted tokens of sessions that are gone and that ran out are deleted with them.
  await kernel.db.db.delete(apiTokens).where(and(like(apiTokens.name, `${MINTED_PREFIX}%`), lt(apiTokens.expiresAt, kernel.clock.now())))
  return rows.length
}
