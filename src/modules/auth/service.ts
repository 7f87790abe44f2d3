import { Value } from '@sinclair/typebox/value'
import { and, eq, gt, inArray, isNull, lt, ne, sql } from 'drizzle-orm'
import { apiTokens, tenants, users } from '../../kernel/tables'
import { passwordResetTokens, pendingSignUps } from './tables'
import type { Principal } from '../../kernel/auth'
import { hashPassword, issueToken, newCapabilityToken, sha256Hex, verifyPassword } from '../../kernel/crypto'
import { isUniqueViolation, KernelErrors, notFound, unauthorized, uniqueAs, validationFailed } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import type { DbOrTx, Tx } from '../../kernel/db'
import type { Kernel } from '../../kernel/kernel'
import { Backoff, compileRule, HOUR } from '../../kernel/rate-limit'
import { spaceSlugById } from '../spaces/service'
import './events'
import { endAdminSessionsOfToken, endAdminSessionsOfUser } from './admin-session'
import {
  AuthErrors,
  type MeView,
  type PasswordChangedView,
  RegisterBody,
  type SessionView,
  type SignUpAcceptedView,
  type SignUpConfirmedView,
  type TenantView,
  type UserView,
} from './model'

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

// pg_advisory_xact_lock key: sign-ups take it, so two at once cannot both see an empty users table (the first account
// is made at once; in first-user mode it is the only one).
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

/**
 * Told, inside the transaction, that a user proved they own their address by setting a new password through a mailed
 * reset link. Onboarding releases the account of an ended pitch demo.
 */
export type PasswordResetHook = (tx: Tx, user: { id: number; tenantId: number }) => Promise<void>

/** What a sign-up follow-up made: anything, plus warnings for the person (a part that could not be done). */
export interface FollowUpResult {
  warnings: string[]
  [key: string]: unknown
}

/**
 * More that a module makes with an account at sign-up (onboarding: a first Space, then sample content). The sign-up
 * names it (`kind` and a JSON `payload`), so that when the account is made later — by the link that confirms the
 * address (REGISTRATION_VERIFY=on) — the same thing follows. A module adds one in its `setup`
 * (`use(authModule).signUpFollowUps.set(kind, ...)`).
 */
export interface SignUpFollowUp {
  /**
   * Inside the transaction that creates the account. `confirmed: false`: the account is made at once and the caller
   * waits (throwing aborts the whole sign-up); `true`: a confirmation link makes it, and the account must be made
   * anyway — what cannot be done becomes a warning.
   */
  inTx(ctx: { tx: Tx; emit: Emit; account: { user: UserView; tenant: TenantView }; payload: unknown; confirmed: boolean }): Promise<FollowUpResult>
  /** After the commit (slower steps, their own transactions): answers the final result. */
  afterCommit?(account: { user: UserView; tenant: TenantView }, made: FollowUpResult, payload: unknown): Promise<FollowUpResult>
}

/** The auth module's state. */
export interface AuthState {
  signUpAllowances: SignUpAllowance[]
  signInChecks: SignInCheck[]
  signUpFollowUps: Map<string, SignUpFollowUp>
  passwordResetHooks: PasswordResetHook[]
}

export const newAuthState = (): AuthState => ({ signUpAllowances: [], signInChecks: [], signUpFollowUps: new Map(), passwordResetHooks: [] })

async function serviceHasUser(db: DbOrTx): Promise<boolean> {
  const [any] = await db.select({ id: users.id }).from(users).limit(1)
  return !!any
}

/**
 * Whether `POST /auth/register` may create an account now (REGISTRATION): `open` always, `closed` never, `first-user`
 * only while the service has no user — unless an allowance admits the address. Then, past the first account, a
 * sign-up that must confirm its address by mail (REGISTRATION_VERIFY=on) needs PUBLIC_URL for the link. A quick answer
 * before the body is validated, the same for every address; the sign-up decides again in its transaction, under a lock.
 */
export async function assertRegistrationOpen(kernel: Kernel, state?: AuthState): Promise<void> {
  const mode = kernel.config.registration
  if (mode === 'first-user' && !(await serviceHasUser(kernel.db.db))) return
  if (mode !== 'open' && !state?.signUpAllowances.length) throw registrationClosed()
  // Only an open service can tell here that the link cannot be mailed; in the restricted modes the transaction first
  // decides whether the address is admitted at all (a walk-in hears registration_closed, as documented).
  if (mode === 'open' && kernel.config.registrationVerify && !kernel.config.publicUrl && (await serviceHasUser(kernel.db.db))) {
    throw registrationUnavailable()
  }
}

const registrationClosed = () =>
  AuthErrors.registrationClosed('Sign-up is closed on this service. Ask its operator for an account or an invitation.')
const registrationUnavailable = () =>
  AuthErrors.registrationUnavailable('Sign-up is unavailable: this service confirms addresses by mail but has no PUBLIC_URL for the link. Ask its operator.')

/** What the start line says about sign-up: the mode, for first-user whether the first account exists yet, and how addresses are confirmed. */
export async function describeRegistration(kernel: Kernel): Promise<string> {
  const { registration: mode, registrationVerify, publicUrl } = kernel.config
  const confirm = !registrationVerify
    ? 'addresses not confirmed (REGISTRATION_VERIFY=off)'
    : publicUrl
      ? 'new accounts confirm their address by mail'
      : 'REGISTRATION_VERIFY=on but PUBLIC_URL is unset: sign-ups after the first account are refused (403 registration_unavailable) until PUBLIC_URL is set'
  if (mode === 'open') return `open (anyone can sign up; ${confirm})`
  if (mode === 'closed') return 'closed'
  return (await serviceHasUser(kernel.db.db)) ? 'closed (first-user: the first account exists)' : 'open for the first account only (first-user)'
}

export interface NewAccountInput {
  email: string
  password: string
  name: string
  tenant_name?: string
}

/** How long the link of a sign-up confirmation mail works. */
const SIGN_UP_TTL_MS = 24 * 3_600_000

/**
 * Sign-up mails per address: 3 an hour, counted for every sign-up whether or not the address has an account. Over
 * it the sign-up still answers the same, but nothing is mailed (and no pending sign-up is stored): nobody can flood
 * an inbox through sign-up.
 */
export const SIGN_UP_MAILS_PER_ADDRESS = compileRule({ id: 'auth.register.address', method: 'POST', path: '/v1/auth/register', limit: 3, windowSeconds: HOUR })

/** The key an address is counted under (per-account limits): a digest, so no address sits in a counter. */
export const accountKey = (email: string) => sha256Hex(normaliseEmail(email)).slice(0, 32)

/** The answer of a sign-up. `created`: the first account of the service, made at once (201 with a session). */
export type SignUpOutcome = { created: true; session: SessionView & { tenant: TenantView }; followUp: FollowUpResult | null } | { created: false }

/** The body of a 202 sign-up answer: it depends on the configuration only, never on the address. */
export function signUpAccepted(kernel: Kernel): SignUpAcceptedView {
  return kernel.config.registrationVerify
    ? {
        message:
          'Check your mail: a link to confirm the address is on its way (it works once, for 24 hours). The account exists once it is followed. If the address has an account already, the mail says so instead.',
        confirmation: 'mail',
      }
    : {
        message: 'Sign in with this address and password. If the address had an account already, nothing was changed and its owner gets a mail saying so.',
        confirmation: 'none',
      }
}

/**
 * A sign-up (`POST /auth/register`, and `POST /onboard` with a follow-up). It answers the same whether or not the
 * address has an account, and does the same work for both (an argon2 hash, one transaction with a mail):
 *
 * - the first account of the service is made at once, with a session (the operator bootstrapping may have no mail yet);
 * - an address that has an account gets a mail "someone tried to sign up with your address" (sign in, or a reset link);
 * - otherwise, with REGISTRATION_VERIFY=on, a pending sign-up is stored and a confirmation link mailed: the account
 *   (and the follow-up) is made when it is followed ({@link confirmSignUp}); with it off, the account is made at once.
 *
 * A refused sign-up (REGISTRATION, or PUBLIC_URL missing for the link) answers 403 whatever the address.
 */
export async function registerUser(
  kernel: Kernel,
  input: NewAccountInput,
  state: AuthState = newAuthState(),
  followUp: { kind: string; payload: unknown } | null = null,
): Promise<SignUpOutcome> {
  await assertRegistrationOpen(kernel, state)
  const { registrationVerify: verify, publicUrl: base } = kernel.config
  const email = normaliseEmail(input.email)
  // argon2 before the transaction: it must not hold the (single, on PGlite) connection. Every sign-up pays it.
  const passwordHash = await hashPassword(kernel.config.passwordHash, input.password)
  // Counted outside the transaction (the Postgres store has its own connection); for every address alike.
  const mailAllowed = (await kernel.rateLimiter.hit(SIGN_UP_MAILS_PER_ADDRESS, accountKey(email))).allowed
  const handler = followUp ? state.signUpFollowUps.get(followUp.kind) : undefined
  if (followUp && !handler) throw new Error(`sign-up follow-up "${followUp.kind}" is not registered`)
  let made: { account: SessionView & { tenant: TenantView }; result: FollowUpResult | null; first: boolean } | null
  try {
    made = await transact(kernel, async (tx, emit) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${FIRST_USER_LOCK})`)
      const first = !(await serviceHasUser(tx))
      const mode = kernel.config.registration
      const walkIn = mode === 'open' || (mode === 'first-user' && first)
      if (!walkIn && !(await admitted(email, tx, state.signUpAllowances))) throw registrationClosed()
      if (!first && verify && !base) throw registrationUnavailable()
      const create = async (token: boolean) => {
        const account = await createAccountTx(kernel, tx, input, passwordHash, { registration: 'bypass', token })
        const result = handler ? await handler.inTx({ tx, emit, account, payload: followUp!.payload, confirmed: false }) : null
        return { account, result, first }
      }
      if (first) return create(true)
      const existing = await userByEmail(tx, email)
      if (existing) {
        if (mailAllowed && base) await mailAddressTaken(kernel, tx, existing, base)
        else if (!base) kernel.logger.info('sign-up with an address that has an account: no mail (no PUBLIC_URL)')
        return null
      }
      if (!verify) return create(false)
      if (mailAllowed) await storePendingSignUp(kernel, tx, input, email, passwordHash, followUp, base!)
      return null
    })
  } catch (err) {
    // Two sign-ups of one new address at once (REGISTRATION_VERIFY=off): the loser answers as every sign-up does.
    if (isUniqueViolation(err, 'users_email_key')) return { created: false }
    throw err
  }
  if (!made) return { created: false }
  const result = handler?.afterCommit && made.result ? await handler.afterCommit(made.account, made.result, followUp!.payload) : made.result
  return made.first ? { created: true, session: made.account, followUp: result } : { created: false }
}

async function admitted(email: string, tx: Tx, allowances: SignUpAllowance[]): Promise<boolean> {
  for (const allows of allowances) if (await allows(email, tx)) return true
  return false
}

/** The mail to an address that has an account when someone signs up with it: no account is made; sign in or reset. */
async function mailAddressTaken(kernel: Kernel, tx: Tx, user: UserRef, base: string): Promise<void> {
  const reset = await passwordResetLinkTx(kernel, tx, user.id, base)
  await kernel.mail.enqueue(
    {
      to: user.email,
      subject: 'Someone tried to sign up with your address',
      text: [
        `Someone (maybe you) tried to create an account at ${base} with ${user.email}.`,
        'This address has an account already, so no new account was made, and nothing about yours changed.',
        '',
        `To sign in: ${base}/admin/`,
        '',
        'Forgot your password? This link lets you choose a new one within one hour (it works once):',
        '',
        reset,
        '',
        'If it was not you, ignore this mail.',
      ].join('\n'),
    },
    tx,
  )
}

/** A sign-up waiting for its address to be confirmed, and the mail with the link. */
async function storePendingSignUp(
  kernel: Kernel,
  tx: Tx,
  input: NewAccountInput,
  email: string,
  passwordHash: string,
  followUp: { kind: string; payload: unknown } | null,
  base: string,
): Promise<void> {
  const { token, hash } = newCapabilityToken()
  const now = kernel.clock.now()
  await tx.insert(pendingSignUps).values({
    email,
    name: input.name.trim(),
    tenantName: input.tenant_name?.trim() || null,
    passwordHash,
    tokenHash: hash,
    followUp,
    createdAt: now,
    expiresAt: new Date(now.getTime() + SIGN_UP_TTL_MS),
  })
  await kernel.mail.enqueue(
    {
      to: email,
      subject: 'Confirm your address',
      text: [
        `Someone (hopefully you) signed up at ${base} with this address (${email}).`,
        '',
        'Open this link within 24 hours to confirm it and create the account (it works once):',
        '',
        `${base}/confirm-sign-up/${token}`,
        '',
        'If you did not sign up, ignore this mail: no account is made.',
      ].join('\n'),
    },
    tx,
  )
}

const SIGN_UP_TOKEN = /^[A-Za-z0-9_-]{43}$/

/**
 * Follows a sign-up confirmation link: the account is made (with the password chosen at sign-up), then the follow-up
 * the sign-up named. Good once and for 24 hours (422 `sign_up_token_invalid`); an address that got an account in the
 * meantime answers 409 `email_taken` (to the holder of the mailed link: the address's owner). REGISTRATION is asked
 * again (a service closed since refuses it).
 */
export async function confirmSignUp(kernel: Kernel, state: AuthState, token: string): Promise<SignUpConfirmedView> {
  const invalid = () => AuthErrors.signUpTokenInvalid('This confirmation link is invalid, used already or expired. Sign up again.')
  if (!SIGN_UP_TOKEN.test(token)) throw invalid()
  const tokenHash = sha256Hex(token)
  let made
  try {
    made = await transact(kernel, async (tx, emit) => {
      const now = kernel.clock.now()
      const [row] = await tx
        .update(pendingSignUps)
        .set({ usedAt: now })
        .where(and(eq(pendingSignUps.tokenHash, tokenHash), isNull(pendingSignUps.usedAt), gt(pendingSignUps.expiresAt, now)))
        .returning()
      if (!row) throw invalid()
      const account = await createAccountTx(
        kernel,
        tx,
        { email: row.email, name: row.name, password: '', tenant_name: row.tenantName ?? undefined },
        row.passwordHash,
        { registration: 'check', allowances: state.signUpAllowances, token: false },
      )
      const followUp = row.followUp as { kind: string; payload: unknown } | null
      const handler = followUp ? state.signUpFollowUps.get(followUp.kind) : undefined
      const result = handler ? await handler.inTx({ tx, emit, account, payload: followUp!.payload, confirmed: true }) : null
      return { account, result, handler, followUp }
    })
  } catch (err) {
    rethrowAccountConflict(err)
  }
  const { account, handler, followUp } = made
  let result = made.result
  if (handler?.afterCommit && result) {
    try {
      result = await handler.afterCommit(account, result, followUp!.payload)
    } catch (err) {
      kernel.logger.warn('sign-up follow-up failed after the account was made', { error: (err as Error).message })
      result = { warnings: [...result.warnings, 'A step after the account could not be completed.'] }
    }
  }
  return { user: account.user, tenant: account.tenant, warnings: result?.warnings ?? [] }
}

export const SIGN_UP_PRUNE_QUEUE = 'auth.sign-up-prune' as const

/** The daily clean-up: pending sign-ups a day past their expiry (used or not) are deleted. Answers how many. */
export async function prunePendingSignUps(kernel: Kernel): Promise<number> {
  const cutoff = new Date(kernel.clock.ms() - 86_400_000)
  const rows = await kernel.db.db.delete(pendingSignUps).where(lt(pendingSignUps.expiresAt, cutoff)).returning({ id: pendingSignUps.id })
  return rows.length
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
  const passwordHash = await hashPassword(kernel.config.passwordHash, input.password)
  try {
    const { user, tenant } = await transact(kernel, (tx) => createAccountTx(kernel, tx, input, passwordHash, { registration: 'bypass', token: false }))
    return { user, tenant }
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
export const rethrowAccountConflict: (err: unknown) => never = uniqueAs('users_email_key', () => AuthErrors.emailTaken('An account with this e-mail already exists.'))

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

// Verified against when the e-mail is unknown, so both failures cost one argon2 verification (one per configured cost).
const dummyHashes = new Map<string, Promise<string>>()

/**
 * Failed sign-ins per address, from wherever they come (a guesser spreading attempts over many IPs meets the same
 * wait): 5 free, then one attempt per 1, 2, 4 … up to 60 minutes; forgotten a day after the first failure, and at once
 * by a password reset. Counted for every address alike, so a refusal (429) says nothing about who has an account.
 */
export const LOGIN_BACKOFF = new Backoff('auth.login.account', { free: 5, firstWaitSeconds: 60, maxWaitSeconds: 3600, forgetSeconds: 86_400 })

export async function loginUser(kernel: Kernel, input: { email: string; password: string }, state?: AuthState): Promise<SessionView> {
  const email = normaliseEmail(input.email)
  const subject = accountKey(email)
  // Before the password is looked at (a right one must not get through a wait either): this attempt counts as a
  // failure until it succeeds.
  const wait = await LOGIN_BACKOFF.attempt(kernel.rateLimiter, subject)
  if (wait > 0) {
    throw KernelErrors.rateLimited(`Too many failed sign-ins for this address. Retry in ${wait} seconds, or reset the password by mail.`, undefined, {
      'Retry-After': String(wait),
    })
  }
  const [user] = await kernel.db.db.select().from(users).where(eq(users.email, email)).limit(1)
  const cost = kernel.config.passwordHash
  const costKey = `${cost.memoryCost}:${cost.timeCost}`
  let dummyHash = dummyHashes.get(costKey)
  if (!dummyHash) dummyHashes.set(costKey, (dummyHash = hashPassword(cost, 'not-a-real-password-but-the-same-cost')))
  const ok = await verifyPassword(input.password, user?.passwordHash ?? (await dummyHash))
  if (!user || !ok) throw AuthErrors.invalidCredentials('The e-mail or password is wrong.')
  // The password was right: whatever follows, this was no guess.
  await LOGIN_BACKOFF.succeeded(kernel.rateLimiter, subject)
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
    // The admin session this token opened or was minted from ends with it: every tab of that browser signs out.
    if (principal.kind === 'user') await endAdminSessionsOfToken(kernel, tx, emit, principal.userId, principal.tokenId)
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
    ui_language: user?.uiLanguage ?? null,
    ui_theme: (user?.uiTheme as MeView['ui_theme'] | undefined) ?? null,
    tenant: { id: tenant.id, name: tenant.name },
    token,
  }
}

/** The signed-in user changes their profile: name, the admin app's language and theme (each given field). */
export async function updateProfile(
  kernel: Kernel,
  principal: Extract<Principal, { kind: 'user' }>,
  input: { name?: string; ui_language?: string | null; ui_theme?: 'system' | 'light' | 'dark' | null },
): Promise<MeView> {
  const set: Partial<typeof users.$inferInsert> = {}
  if (input.name !== undefined) set.name = input.name.trim()
  if (input.ui_language !== undefined) set.uiLanguage = input.ui_language
  if (input.ui_theme !== undefined) set.uiTheme = input.ui_theme
  if (Object.keys(set).length) await kernel.db.db.update(users).set(set).where(eq(users.id, principal.userId))
  return describePrincipal(kernel, principal)
}

/** Signs out every login session of the signed-in user, the one of this request included (Space tokens stay). */
export async function logoutEverywhere(kernel: Kernel, principal: Extract<Principal, { kind: 'user' }>): Promise<{ revoked_sessions: number }> {
  return transact(kernel, async (tx, emit) => ({ revoked_sessions: await revokeSessions(kernel, tx, emit, principal.userId, null) }))
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
  // The admin sessions go with them (their minted tokens are user tokens, revoked above), but the one of `keep`.
  await endAdminSessionsOfUser(tx, userId, keep)
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
  const passwordHash = await hashPassword(kernel.config.passwordHash, input.new_password)
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
  const passwordHash = await hashPassword(kernel.config.passwordHash, input.password)
  const done = await transact(kernel, async (tx, emit) => {
    await tx.update(users).set({ passwordHash }).where(eq(users.id, user.id))
    const revoked = await revokeSessions(kernel, tx, emit, user.id, null)
    return { revoked_sessions: revoked, user: { id: user.id, email: user.email, name: user.name } }
  })
  await LOGIN_BACKOFF.forgive(kernel.rateLimiter, accountKey(user.email))
  return done
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

/** Password resets carried out per account: 5 an hour, from any address (a second line behind the 3 mails an hour). */
export const RESET_CONFIRMS_PER_ACCOUNT = compileRule({
  id: 'auth.password-reset.confirm.account',
  method: 'POST',
  path: '/v1/auth/password-reset/confirm',
  limit: 5,
  windowSeconds: HOUR,
})

/**
 * Sets a new password with a mailed reset token: good once and for one hour. Every login session of the user is
 * signed out, and every other open reset token of the user is used up.
 */
export async function resetPassword(kernel: Kernel, input: { token: string; new_password: string }, state?: AuthState): Promise<PasswordChangedView> {
  const invalid = () => AuthErrors.resetTokenInvalid('This reset link is invalid, used already or expired. Ask for a new one.')
  if (!RESET_TOKEN.test(input.token)) throw invalid()
  const tokenHash = sha256Hex(input.token)
  const live = and(eq(passwordResetTokens.tokenHash, tokenHash), isNull(passwordResetTokens.usedAt), gt(passwordResetTokens.expiresAt, kernel.clock.now()))
  // A cheap look first, so a bad token costs no argon2 hash; the claim below decides.
  const [found] = await kernel.db.db.select({ userId: passwordResetTokens.userId }).from(passwordResetTokens).where(live).limit(1)
  if (!found) throw invalid()
  // Per account, whatever the IP (each confirmation needs a mailed link, and those are 3 an hour per address).
  const perAccount = await kernel.rateLimiter.hit(RESET_CONFIRMS_PER_ACCOUNT, `u${found.userId}`)
  if (!perAccount.allowed) {
    throw KernelErrors.rateLimited('Too many password resets for this account. Retry later.', undefined, { 'Retry-After': String(Math.max(1, perAccount.resetIn)) })
  }
  const passwordHash = await hashPassword(kernel.config.passwordHash, input.new_password)
  const done = await transact(kernel, async (tx, emit) => {
    const now = kernel.clock.now()
    const [claimed] = await tx
      .update(passwordResetTokens)
      .set({ usedAt: now })
      .where(and(eq(passwordResetTokens.tokenHash, tokenHash), isNull(passwordResetTokens.usedAt), gt(passwordResetTokens.expiresAt, now)))
      .returning({ userId: passwordResetTokens.userId })
    if (!claimed) throw invalid()
    const [user] = await tx.update(users).set({ passwordHash }).where(eq(users.id, claimed.userId)).returning({ id: users.id, tenantId: users.tenantId, email: users.email })
    for (const hook of state?.passwordResetHooks ?? []) await hook(tx, { id: user.id, tenantId: user.tenantId })
    return { revoked_sessions: await revokeSessions(kernel, tx, emit, claimed.userId, null), email: user.email }
  })
  // The owner proved the mailbox: the sign-in back-off of the address starts afresh.
  await LOGIN_BACKOFF.forgive(kernel.rateLimiter, accountKey(done.email))
  return { revoked_sessions: done.revoked_sessions }
}

/** The session of a sign-up that made the first account of the service (seeding a fresh database); throws otherwise. */
export function firstAccount(outcome: SignUpOutcome): SessionView & { tenant: TenantView } {
  if (!outcome.created) throw new Error('the service has an account already: this sign-up waits for its mailed link (or signs in)')
  return outcome.session
}
