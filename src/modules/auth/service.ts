import { Value } from '@sinclair/typebox/value'
import { and, eq, gt, inArray, isNull, ne, sql } from 'drizzle-orm'
import { apiTokens, passwordResetTokens, tenants, users } from '../../../db/schema'
import type { Principal } from '../../kernel/auth'
import { hashPassword, issueToken, newCapabilityToken, sha256Hex, verifyPassword } from '../../kernel/crypto'
import { isUniqueViolation, notFound, unauthorized, validationFailed } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import type { DbOrTx, Tx } from '../../kernel/db'
import type { Kernel } from '../../kernel/kernel'
import { compileRule, HOUR } from '../../kernel/rate-limit'
import { spaceSlugById } from '../spaces/service'
import './events'
import { AuthErrors, type MeView, RegisterBody, type PasswordChangedView, type SessionView, type TenantView, type UserView } from './model'

const DAY_MS = 86_400_000
export type { TenantView, UserView }

const normaliseEmail = (email: string) => email.trim().toLowerCase()

async function issueUserToken(kernel: Kernel, db: Pick<Kernel['db']['db'], 'insert'>, userId: number, tenantId: number) {
  const t = issueToken('u')
  const now = kernel.clock.now()
  const expiresAt = new Date(now.getTime() + kernel.config.userTokenTtlDays * DAY_MS)
  await db.insert(apiTokens).values({
    id: t.id,
    secretHash: t.secretHash,
    kind: 'user',
    tenantId,
    userId,
    createdAt: now,
    expiresAt,
  })
  return { token: t.token, expiresAt }
}

// pg_advisory_xact_lock key: first-user registrations take it, so two at once cannot both see an empty users table.
const FIRST_USER_LOCK = 4_720_312

/**
 * Lets an address sign up although REGISTRATION refuses walk-ins (first-user after the first account, closed): e.g. an
 * address with a pending Space invitation. A module below auth in the list adds one in its `setup`
 * (`use(authModule).signUpAllowances.push(...)`); it is asked inside the sign-up transaction.
 */
export type SignUpAllowance = (email: string, tx: Tx) => Promise<boolean>

/**
 * May refuse a login whose password was right: answers why (the message of 403 `sign_in_refused`), or null to let it
 * through. A module below auth adds one in its `setup` (`use(authModule).signInChecks.push(...)`), e.g. onboarding
 * for the users of an ended pitch demo. Asked only after the password matched, so it reveals nothing to a guesser.
 */
export type SignInCheck = (user: { id: number; tenantId: number }) => Promise<string | null>

/** The auth module's state. */
export interface AuthState {
  signUpAllowances: SignUpAllowance[]
  signInChecks: SignInCheck[]
}

/**
 * Whether `POST /auth/register` may create an account now (REGISTRATION): `open` always, `closed` never, `first-user`
 * only while the service has no user — unless an allowance admits the address. A quick answer before the body is
 * validated, so only when no allowance could change it; registerUser decides again in its transaction, under a lock.
 */
export async function assertRegistrationOpen(kernel: Kernel, state?: AuthState): Promise<void> {
  const mode = kernel.config.registration
  if (mode === 'open' || state?.signUpAllowances.length) return
  if (mode === 'first-user') {
    const [any] = await kernel.db.db.select({ id: users.id }).from(users).limit(1)
    if (!any) return
  }
  throw registrationClosed()
}

const registrationClosed = () =>
  AuthErrors.registrationClosed('Sign-up is closed on this service. Ask its operator for an account or an invitation.')

/** What the start line says about sign-up: the mode and, for first-user, whether the first account exists yet. */
export async function describeRegistration(kernel: Kernel): Promise<string> {
  const mode = kernel.config.registration
  if (mode === 'open') return 'open (anyone can sign up)'
  if (mode === 'closed') return 'closed'
  const [any] = await kernel.db.db.select({ id: users.id }).from(users).limit(1)
  return any ? 'closed (first-user: the first account exists)' : 'open for the first account only (first-user)'
}

export interface NewAccountInput {
  email: string
  password: string
  name: string
  tenant_name?: string
}

export async function registerUser(
  kernel: Kernel,
  input: NewAccountInput,
  state: AuthState = { signUpAllowances: [], signInChecks: [] },
): Promise<SessionView & { tenant: TenantView }> {
  await assertRegistrationOpen(kernel, state)
  return createAccount(kernel, input, { viaRegistration: true, allowances: state.signUpAllowances })
}

/**
 * The operator's way in (`content-service user create`): a User and its Tenant whatever REGISTRATION says, and no
 * session token (the user logs in).
 */
export async function createUserAsOperator(kernel: Kernel, input: NewAccountInput): Promise<{ user: UserView; tenant: TenantView }> {
  // The same rules as the register route's body (no HTTP layer validates this caller's input).
  const fields: Record<string, string[]> = {}
  for (const e of Value.Errors(RegisterBody, input)) {
    const key = e.path.replace(/^\//, '') || 'body'
    const custom = (e.schema as { error?: unknown }).error
    ;(fields[key] ??= []).push(typeof custom === 'string' ? custom : e.message)
  }
  if (Object.keys(fields).length) throw validationFailed(fields)
  const { user, tenant } = await createAccount(kernel, input, { viaRegistration: false, allowances: [] })
  return { user, tenant }
}

async function createAccount(
  kernel: Kernel,
  input: NewAccountInput,
  opts: { viaRegistration: boolean; allowances: SignUpAllowance[] },
): Promise<SessionView & { tenant: TenantView }> {
  const passwordHash = await hashPassword(input.password)
  try {
    return await transact(kernel, (tx) =>
      createAccountTx(kernel, tx, input, passwordHash, {
        registration: opts.viaRegistration ? 'check' : 'bypass',
        allowances: opts.allowances,
        token: opts.viaRegistration,
      }),
    )
  } catch (err) {
    rethrowAccountConflict(err)
  }
}

/** Options of {@link createAccountTx}. */
export interface AccountTxOptions {
  /** 'check': REGISTRATION decides (as `POST /auth/register`, allowances included); 'bypass': the caller admitted the address. */
  registration: 'check' | 'bypass'
  allowances?: SignUpAllowance[]
  /** Issue a login session (user token) for the new user; '' otherwise. */
  token: boolean
}

/**
 * A User and its Tenant (and a session when asked) inside the caller's transaction, so a module creating more with
 * them (onboarding: a Space and its membership) commits or rolls back all at once. `passwordHash` comes from
 * `hashPassword` (computed before the transaction: argon2 must not hold it open). A taken e-mail aborts the
 * transaction with a unique violation: the caller maps it with {@link rethrowAccountConflict} after the rollback.
 */
export async function createAccountTx(
  kernel: Kernel,
  tx: Tx,
  input: NewAccountInput,
  passwordHash: string,
  opts: AccountTxOptions,
): Promise<SessionView & { tenant: TenantView }> {
  const email = normaliseEmail(input.email)
  if (opts.registration === 'check' && kernel.config.registration !== 'open') {
    let admitted = false
    if (kernel.config.registration === 'first-user') {
      // Serialises first-user sign-ups: the second waits for the first to commit, then sees its user.
      await tx.execute(sql`select pg_advisory_xact_lock(${FIRST_USER_LOCK})`)
      const [any] = await tx.select({ id: users.id }).from(users).limit(1)
      admitted = !any
    }
    for (const allows of opts.allowances ?? []) if (!admitted) admitted = await allows(email, tx)
    if (!admitted) throw registrationClosed()
  }
  const now = kernel.clock.now()
  const [tenant] = await tx
    .insert(tenants)
    .values({ name: input.tenant_name?.trim() || `${input.name.trim()}'s workspace`, createdAt: now })
    .returning()
  const [user] = await tx
    .insert(users)
    .values({ tenantId: tenant.id, email, name: input.name.trim(), passwordHash, createdAt: now })
    .returning()
  const token = opts.token ? (await issueUserToken(kernel, tx, user.id, tenant.id)).token : ''
  return {
    token,
    user: { id: user.id, email: user.email, name: user.name },
    tenant: { id: tenant.id, name: tenant.name },
  }
}

/** A taken e-mail (the unique violation of a rolled-back account insert) as 409 email_taken; anything else as is. */
export function rethrowAccountConflict(err: unknown): never {
  if (isUniqueViolation(err, 'users_email_key')) throw AuthErrors.emailTaken('An account with this e-mail already exists.')
  throw err
}

/**
 * Ends every bearer token of a Tenant (login sessions and Space-scoped tokens) inside the caller's transaction:
 * how a module that closes a Tenant (expired pitch demos) signs everyone out. Answers how many were live.
 */
export async function revokeTenantTokensTx(kernel: Kernel, tx: Tx, tenantId: number): Promise<number> {
  const rows = await tx
    .update(apiTokens)
    .set({ revokedAt: kernel.clock.now() })
    .where(and(eq(apiTokens.tenantId, tenantId), isNull(apiTokens.revokedAt)))
    .returning({ id: apiTokens.id })
  return rows.length
}

// Verified against when the e-mail is unknown, so both failures cost one argon2 verification.
let dummyHash: Promise<string> | null = null

export async function loginUser(kernel: Kernel, input: { email: string; password: string }, state?: AuthState): Promise<SessionView> {
  const email = normaliseEmail(input.email)
  const [user] = await kernel.db.db.select().from(users).where(eq(users.email, email)).limit(1)
  dummyHash ??= hashPassword('not-a-real-password-but-the-same-cost')
  const ok = await verifyPassword(input.password, user?.passwordHash ?? (await dummyHash))
  if (!user || !ok) throw AuthErrors.invalidCredentials('The e-mail or password is wrong.')
  for (const check of state?.signInChecks ?? []) {
    const refused = await check({ id: user.id, tenantId: user.tenantId })
    if (refused) throw AuthErrors.signInRefused(refused)
  }
  const { token } = await issueUserToken(kernel, kernel.db.db, user.id, user.tenantId)
  return { token, user: { id: user.id, email: user.email, name: user.name } satisfies UserView }
}

export async function logout(kernel: Kernel, principal: Principal) {
  await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .update(apiTokens)
      .set({ revokedAt: kernel.clock.now() })
      .where(and(eq(apiTokens.id, principal.tokenId), isNull(apiTokens.revokedAt)))
      .returning({ id: apiTokens.id })
    if (row) emit({ type: 'session.revoked', spaceId: null, payload: { user_id: principal.userId, token_ids: [row.id] } })
  })
}

export async function describePrincipal(kernel: Kernel, principal: Principal): Promise<MeView> {
  const [tenant] = await kernel.db.db.select().from(tenants).where(eq(tenants.id, principal.tenantId)).limit(1)
  const userId = principal.userId
  const [user] = userId ? await kernel.db.db.select().from(users).where(eq(users.id, userId)).limit(1) : []
  const token =
    principal.kind === 'user'
      ? { type: 'user' as const, expires_at: principal.expiresAt?.toISOString() ?? null }
      : {
          type: 'space' as const,
          space: await spaceSlugById(kernel, principal.spaceId),
          role: principal.role,
          expires_at: principal.expiresAt?.toISOString() ?? null,
        }
  if (!tenant) throw unauthorized()
  return {
    id: user?.id ?? null,
    email: user?.email ?? null,
    name: user?.name ?? null,
    tenant: { id: tenant.id, name: tenant.name },
    token,
  }
}

/** Display names of users by id (for author and presence views in other modules). */
export async function userNames(kernel: Kernel, ids: number[]): Promise<Map<number, string>> {
  const unique = [...new Set(ids)]
  if (!unique.length) return new Map()
  const rows = await kernel.db.db.select({ id: users.id, name: users.name }).from(users).where(inArray(users.id, unique))
  return new Map(rows.map((r) => [r.id, r.name]))
}

/** A user as other modules name them: id, display name, e-mail. */
export interface UserRef {
  id: number
  name: string
  email: string
}

/**
 * Users by id (inside the caller's transaction when given one): how other modules show the people they hold ids of
 * without reading the auth module's table. Unknown ids are absent from the map.
 */
export async function usersByIds(db: DbOrTx, ids: number[]): Promise<Map<number, UserRef>> {
  const unique = [...new Set(ids)]
  if (!unique.length) return new Map()
  const rows = await db.select({ id: users.id, name: users.name, email: users.email }).from(users).where(inArray(users.id, unique))
  return new Map(rows.map((r) => [r.id, r]))
}

/** The user with this e-mail (already normalised by the caller, as accounts store it), or null. */
export async function userByEmail(db: DbOrTx, email: string): Promise<UserRef | null> {
  const [row] = await db.select({ id: users.id, name: users.name, email: users.email }).from(users).where(eq(users.email, email)).limit(1)
  return row ?? null
}

// ---- password change and reset ----

const RESET_TTL_MS = 3_600_000

/**
 * Reset mails per address: 3 an hour, counted whether or not the address has an account. Over it the request still
 * answers 202 with the same body, but no mail goes out: nobody can flood an inbox through this route.
 */
export const RESET_MAILS_PER_ADDRESS = compileRule({
  id: 'auth.password-reset.address',
  method: 'POST',
  path: '/v1/auth/password-reset',
  limit: 3,
  windowSeconds: HOUR,
})

/** Signs out every login session of the user (user tokens) but `keep`; answers how many were still live. */
async function revokeSessions(kernel: Kernel, tx: Tx, emit: Emit, userId: number, keep: string | null): Promise<number> {
  const now = kernel.clock.now()
  const rows = await tx
    .update(apiTokens)
    .set({ revokedAt: now })
    .where(
      and(
        eq(apiTokens.userId, userId),
        eq(apiTokens.kind, 'user'),
        isNull(apiTokens.revokedAt),
        gt(apiTokens.expiresAt, now),
        keep ? ne(apiTokens.id, keep) : undefined,
      ),
    )
    .returning({ id: apiTokens.id })
  if (rows.length) emit({ type: 'session.revoked', spaceId: null, payload: { user_id: userId, token_ids: rows.map((r) => r.id) } })
  // Reset links mailed before the change must not undo it.
  await tx
    .update(passwordResetTokens)
    .set({ usedAt: now })
    .where(and(eq(passwordResetTokens.userId, userId), isNull(passwordResetTokens.usedAt)))
  return rows.length
}

/**
 * A signed-in user changes their password: the current one must be right. Every other login session of the user is
 * signed out (the one making the change stays); Space-scoped API tokens are left alone, as they belong to the Space.
 */
export async function changePassword(
  kernel: Kernel,
  principal: Extract<Principal, { kind: 'user' }>,
  input: { current_password: string; new_password: string },
): Promise<PasswordChangedView> {
  const [user] = await kernel.db.db.select().from(users).where(eq(users.id, principal.userId)).limit(1)
  if (!user) throw unauthorized()
  if (!(await verifyPassword(input.current_password, user.passwordHash))) {
    throw AuthErrors.wrongPassword('The current password is wrong.', { current_password: ['is not your current password'] })
  }
  const passwordHash = await hashPassword(input.new_password)
  return transact(kernel, async (tx, emit) => {
    await tx.update(users).set({ passwordHash }).where(eq(users.id, user.id))
    return { revoked_sessions: await revokeSessions(kernel, tx, emit, user.id, principal.tokenId) }
  })
}

/**
 * The operator sets a user's password (`content-service user set-password`): every login session of the user is
 * signed out and open reset links are used up, as after a reset by mail.
 */
export async function setPasswordAsOperator(kernel: Kernel, input: { email: string; password: string }): Promise<PasswordChangedView & { user: UserView }> {
  const password = RegisterBody.properties.password
  const fields: Record<string, string[]> = {}
  for (const e of Value.Errors(password, input.password)) (fields.password ??= []).push(String((e.schema as { error?: unknown }).error ?? e.message))
  if (Object.keys(fields).length) throw validationFailed(fields)
  const [user] = await kernel.db.db.select().from(users).where(eq(users.email, normaliseEmail(input.email))).limit(1)
  if (!user) throw notFound('User')
  const passwordHash = await hashPassword(input.password)
  return transact(kernel, async (tx, emit) => {
    await tx.update(users).set({ passwordHash }).where(eq(users.id, user.id))
    const revoked = await revokeSessions(kernel, tx, emit, user.id, null)
    return { revoked_sessions: revoked, user: { id: user.id, email: user.email, name: user.name } }
  })
}

/** The job behind a reset request: who asked, and the base of the link. */
export interface PasswordResetJob {
  email: string
  base: string
}
export const PASSWORD_RESET_QUEUE = 'auth.password-reset' as const

/**
 * A reset request. It does the same work whatever the address: count it against the per-address limit and queue a
 * job, which looks the address up and mails the link when it has an account. So neither the answer nor its timing
 * tells whether an account exists. Over the per-address limit nothing is queued (the caller answers the same).
 */
export async function requestPasswordReset(kernel: Kernel, input: { email: string }): Promise<void> {
  // Never the request's Host: a forged one would mail the victim a link to the attacker's site, with the token.
  const base = kernel.config.publicUrl
  if (!base) {
    throw AuthErrors.resetUnavailable('Password reset by mail needs PUBLIC_URL on this service. Ask its operator to set it, or to reset your password.')
  }
  const email = normaliseEmail(input.email)
  const decision = await kernel.rateLimiter.hit(RESET_MAILS_PER_ADDRESS, email)
  if (!decision.allowed) {
    kernel.logger.info('password reset: per-address limit reached, no mail sent')
    return
  }
  await kernel.jobs.enqueue(PASSWORD_RESET_QUEUE, { email, base } satisfies PasswordResetJob)
}

/** The `auth.password-reset` job: a token and its mail (queued in the same transaction) when the address has an account. */
export async function mailPasswordReset(kernel: Kernel, job: PasswordResetJob): Promise<void> {
  const [user] = await kernel.db.db.select({ id: users.id, email: users.email }).from(users).where(eq(users.email, job.email)).limit(1)
  if (!user) return
  await kernel.db.db.transaction(async (tx) => {
    const link = await passwordResetLinkTx(kernel, tx, user.id, job.base)
    await kernel.mail.enqueue(
      {
        to: user.email,
        subject: 'Reset your password',
        text: [
          `Someone (hopefully you) asked to reset the password of the account ${user.email} at ${job.base}.`,
          '',
          'Open this link within one hour to choose a new password (it works once):',
          '',
          link,
          '',
          'If you did not ask for this, ignore this mail: your password stays as it is.',
        ].join('\n'),
      },
      tx,
    )
  })
}

/**
 * A fresh password-reset link for a user (good once, for one hour), its token stored hashed inside the caller's
 * transaction: for a module that mails it in a message of its own (a pitch demo's welcome mail) in that transaction.
 * `base` must be PUBLIC_URL, never a request's Host.
 */
export async function passwordResetLinkTx(kernel: Kernel, tx: Tx, userId: number, base: string): Promise<string> {
  const { token, hash } = newCapabilityToken()
  const now = kernel.clock.now()
  await tx.insert(passwordResetTokens).values({ userId, tokenHash: hash, createdAt: now, expiresAt: new Date(now.getTime() + RESET_TTL_MS) })
  return `${base}/reset-password/${token}`
}

const RESET_TOKEN = /^[A-Za-z0-9_-]{43}$/

/**
 * Sets a new password with a mailed reset token: good once and for one hour. Every login session of the user is
 * signed out, and every other open reset token of the user is used up.
 */
export async function resetPassword(kernel: Kernel, input: { token: string; new_password: string }): Promise<PasswordChangedView> {
  const invalid = () => AuthErrors.resetTokenInvalid('This reset link is invalid, used already or expired. Ask for a new one.')
  if (!RESET_TOKEN.test(input.token)) throw invalid()
  const tokenHash = sha256Hex(input.token)
  const live = and(eq(passwordResetTokens.tokenHash, tokenHash), isNull(passwordResetTokens.usedAt), gt(passwordResetTokens.expiresAt, kernel.clock.now()))
  // A cheap look first, so a bad token costs no argon2 hash; the claim below decides.
  const [found] = await kernel.db.db.select({ id: passwordResetTokens.id }).from(passwordResetTokens).where(live).limit(1)
  if (!found) throw invalid()
  const passwordHash = await hashPassword(input.new_password)
  return transact(kernel, async (tx, emit) => {
    const now = kernel.clock.now()
    const [claimed] = await tx
      .update(passwordResetTokens)
      .set({ usedAt: now })
      .where(and(eq(passwordResetTokens.tokenHash, tokenHash), isNull(passwordResetTokens.usedAt), gt(passwordResetTokens.expiresAt, now)))
      .returning({ userId: passwordResetTokens.userId })
    if (!claimed) throw invalid()
    await tx.update(users).set({ passwordHash }).where(eq(users.id, claimed.userId))
    return { revoked_sessions: await revokeSessions(kernel, tx, emit, claimed.userId, null) }
  })
}
