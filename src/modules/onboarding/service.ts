import { and, asc, count, eq, isNotNull, isNull, lte } from 'drizzle-orm'
import { pitchInvitees } from '../../../db/schema'
import type { Principal, SpaceAccess } from '../../kernel/auth'
import { hashPassword, randomBytes } from '../../kernel/crypto'
import type { Tx } from '../../kernel/db'
import { normalizeEmail } from '../../kernel/email'
import { AppError, isUniqueViolation, notFound } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import {
  type AuthState,
  assertRegistrationOpen,
  createAccountTx,
  passwordResetLinkTx,
  rethrowAccountConflict,
  revokeTenantTokensTx,
} from '../auth/service'
import { archiveTenantSpacesTx, checkNewSpaceLocales, createSpaceTx, findLiveSpace, rethrowSpaceConflict } from '../spaces/service'
import {
  MAX_INVITEES_PER_TENANT,
  type OnboardedView,
  type OnboardInput,
  OnboardingErrors,
  type PitchInviteeInput,
  type PitchInviteeView,
  type TestAccountView,
} from './model'
import { type SampleSummary, seedSampleContent } from './sample'

const DAY_MS = 86_400_000
type UserPrincipal = Extract<Principal, { kind: 'user' }>

/** Admin access to a Space as the service itself acts with it: the sample step writes as the Space's new owner. */
async function ownerAccess(kernel: Kernel, slug: string, principal: Principal): Promise<SpaceAccess> {
  const space = await findLiveSpace(kernel, slug)
  if (!space) throw notFound('Space')
  return { principal, space, role: 'admin' }
}

/**
 * The sample step after the account's transaction committed. Each piece of sample content is its own service call
 * (the stories, forms and datasources services each run their own transaction), so it cannot share the account's
 * transaction; a failure leaves the account, Tenant and Space in place and is reported as a warning, not an error.
 */
async function sampleAfterCommit(kernel: Kernel, access: SpaceAccess): Promise<{ sample: SampleSummary | null; warnings: string[] }> {
  try {
    return { sample: await seedSampleContent(kernel, access), warnings: [] }
  } catch (err) {
    kernel.logger.warn('onboarding: the sample content step failed', { space: access.space.slug, error: (err as Error).message })
    const why = err instanceof AppError ? err.message : 'an internal error'
    return { sample: null, warnings: [`The sample content could not be written completely (${why}); the account and the Space were created.`] }
  }
}

/**
 * `POST /v1/onboard`: a User, its Tenant, a Space with the user as admin, and a login session, in one transaction
 * (a taken e-mail or slug rolls all of it back: 409). It obeys REGISTRATION as sign-up does. Emits `space.created`.
 */
export async function onboard(kernel: Kernel, auth: AuthState, input: OnboardInput): Promise<OnboardedView> {
  await assertRegistrationOpen(kernel, auth)
  checkNewSpaceLocales(input.space)
  // argon2 before the transaction: it must not hold the (single, on PGlite) connection.
  const passwordHash = await hashPassword(input.password)
  let created
  try {
    created = await transact(kernel, async (tx, emit) => {
      const account = await createAccountTx(kernel, tx, input, passwordHash, { registration: 'check', allowances: auth.signUpAllowances, token: true })
      const space = await createSpaceTx(kernel, tx, emit, { tenantId: account.tenant.id, userId: account.user.id }, input.space)
      return { ...account, space }
    })
  } catch (err) {
    if (isUniqueViolation(err, 'spaces_slug_key')) rethrowSpaceConflict(err, input.space.slug)
    rethrowAccountConflict(err)
  }
  let sample: SampleSummary | null = null
  let warnings: string[] = []
  if (input.sample_content) {
    const principal: UserPrincipal = { kind: 'user', tokenId: '', tenantId: created.tenant.id, userId: created.user.id, expiresAt: null }
    ;({ sample, warnings } = await sampleAfterCommit(kernel, await ownerAccess(kernel, created.space.slug, principal)))
  }
  return { ...created, sample_content: sample, warnings }
}

/** `content-service seed --space <slug>`: the sample content into an existing live Space, as the service itself. */
export async function seedSpace(kernel: Kernel, slug: string): Promise<SampleSummary> {
  const space = await findLiveSpace(kernel, slug)
  if (!space) throw notFound('Space')
  // No person acts: versions carry no author, as with a Space-scoped token.
  const principal: Principal = { kind: 'space', tokenId: '', tenantId: space.tenantId, spaceId: space.id, role: 'admin', userId: null, expiresAt: null }
  return seedSampleContent(kernel, { principal, space, role: 'admin' })
}

// ---- pitch invitees ----

/**
 * The login check for demo users: once their demo ended (or its PITCH_TTL_DAYS ran out, before the daily job ran) the
 * right password no longer opens a session. Registered with the auth module in `setup`.
 */
export async function demoSignInRefusal(kernel: Kernel, user: { tenantId: number }): Promise<string | null> {
  const [row] = await kernel.db.db
    .select({ endedAt: pitchInvitees.endedAt, expiresAt: pitchInvitees.expiresAt })
    .from(pitchInvitees)
    .where(eq(pitchInvitees.demoTenantId, user.tenantId))
    .limit(1)
  if (!row) return null
  const ended = row.endedAt !== null || (row.expiresAt !== null && row.expiresAt <= kernel.clock.now())
  return ended ? 'This demo account has ended. Ask the person who invited you for a new one.' : null
}

type InviteeRow = typeof pitchInvitees.$inferSelect

function inviteeView(row: InviteeRow, now: Date): PitchInviteeView {
  const expired = row.endedAt !== null || (row.expiresAt !== null && row.expiresAt <= now)
  return {
    slug: row.slug,
    name: row.name,
    email: row.email,
    status: row.provisionedAt === null ? 'invited' : expired ? 'expired' : 'provisioned',
    provisioned_at: row.provisionedAt?.toISOString() ?? null,
    expires_at: row.expiresAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  }
}

/** The pitch invitees of the caller's Tenant, oldest first (at most MAX_INVITEES_PER_TENANT exist). */
export async function listPitchInvitees(kernel: Kernel, principal: UserPrincipal): Promise<PitchInviteeView[]> {
  const rows = await kernel.db.db
    .select()
    .from(pitchInvitees)
    .where(and(eq(pitchInvitees.tenantId, principal.tenantId), isNull(pitchInvitees.deletedAt)))
    .orderBy(asc(pitchInvitees.createdAt), asc(pitchInvitees.id))
  const now = kernel.clock.now()
  return rows.map((r) => inviteeView(r, now))
}

export async function createPitchInvitee(kernel: Kernel, principal: UserPrincipal, input: PitchInviteeInput): Promise<PitchInviteeView> {
  const email = normalizeEmail(input.email) ?? input.email.trim().toLowerCase()
  try {
    return await kernel.db.db.transaction(async (tx) => {
      const [{ n }] = await tx
        .select({ n: count() })
        .from(pitchInvitees)
        .where(and(eq(pitchInvitees.tenantId, principal.tenantId), isNull(pitchInvitees.deletedAt)))
      if (Number(n) >= MAX_INVITEES_PER_TENANT) throw OnboardingErrors.inviteeLimit()
      const now = kernel.clock.now()
      const [row] = await tx
        .insert(pitchInvitees)
        .values({ tenantId: principal.tenantId, slug: input.slug, name: input.name.trim(), email, createdBy: principal.userId, createdAt: now })
        .returning()
      return inviteeView(row, now)
    })
  } catch (err) {
    if (isUniqueViolation(err, 'pitch_invitees_slug_key')) throw OnboardingErrors.inviteeExists(`A pitch invitee with the slug "${input.slug}" exists already.`)
    throw err
  }
}

/** Closes a demo: its Spaces archived (space.archived each), every token of its Tenant revoked, the invitee ended. */
async function endDemo(kernel: Kernel, tx: Tx, emit: Emit, row: InviteeRow): Promise<void> {
  if (row.demoTenantId !== null && row.endedAt === null) {
    await archiveTenantSpacesTx(kernel, tx, emit, row.demoTenantId)
    await revokeTenantTokensTx(kernel, tx, row.demoTenantId)
  }
}

/**
 * Deletes an invitee of the caller's Tenant. A provisioned one is closed at once (as when it expires) and kept hidden
 * (its slug stays taken), so its demo user stays unable to sign in; one never provisioned is removed.
 */
export async function deletePitchInvitee(kernel: Kernel, principal: UserPrincipal, slug: string): Promise<void> {
  await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .select()
      .from(pitchInvitees)
      .where(and(eq(pitchInvitees.slug, slug), eq(pitchInvitees.tenantId, principal.tenantId), isNull(pitchInvitees.deletedAt)))
      .for('update')
    // Another Tenant's invitee reads as unknown.
    if (!row) throw notFound('Pitch invitee')
    if (row.provisionedAt === null) {
      await tx.delete(pitchInvitees).where(eq(pitchInvitees.id, row.id))
      return
    }
    await endDemo(kernel, tx, emit, row)
    const now = kernel.clock.now()
    await tx.update(pitchInvitees).set({ deletedAt: now, endedAt: row.endedAt ?? now }).where(eq(pitchInvitees.id, row.id))
  })
}

const hex = (bytes: number) => Buffer.from(randomBytes(bytes)).toString('hex')

function welcomeMail(to: string, name: string, base: string, resetLink: string, expiresAt: Date) {
  return {
    to,
    subject: 'Your demo account is ready',
    text: [
      `Hello ${name},`,
      '',
      'your demo account is ready, with a Space of sample content to try.',
      '',
      `1. Choose your password (this link works once, for one hour): ${resetLink}`,
      `2. Sign in at ${base}/admin/ with ${to} and that password.`,
      '',
      `If the hour has passed, ask for a new link from the sign-in page ("forgot password") with ${to}.`,
      `The demo ends on ${expiresAt.toUTCString()}.`,
      '',
      'If you did not expect this, ignore this mail.',
    ].join('\n'),
  }
}

/**
 * `POST /v1/pitch/{slug}/test-account` (anonymous; the invitation is the Tenant admin's): once per invitee, a demo
 * Tenant with one Space for the invitee's e-mail, whatever REGISTRATION says. The invitee row is claimed by a
 * conditional update in the same transaction as the account, so of two calls at once one gets 201, the other 409.
 * The welcome mail (sign-in address plus a one-hour password link: no password travels by mail) is queued in that
 * transaction; the sample content follows after commit (a failure there is a warning).
 */
export async function provisionTestAccount(kernel: Kernel, slug: string): Promise<TestAccountView> {
  const base = kernel.config.publicUrl
  const [found] = await kernel.db.db
    .select()
    .from(pitchInvitees)
    .where(and(eq(pitchInvitees.slug, slug), isNull(pitchInvitees.deletedAt)))
    .limit(1)
  if (!found) throw notFound('Pitch invitee')
  if (found.provisionedAt !== null) throw OnboardingErrors.alreadyProvisioned()
  // Never the request's Host: a forged one would mail the invitee a password link to someone else's site.
  if (!base) throw OnboardingErrors.pitchUnavailable()
  // The demo user's password is random and never shown: the invitee chooses one through the mailed link.
  const passwordHash = await hashPassword(hex(32))
  const spaceSlug = `${slug.slice(0, 48)}-demo-${hex(3)}`
  let created
  try {
    created = await transact(kernel, async (tx, emit) => {
      const now = kernel.clock.now()
      const expiresAt = new Date(now.getTime() + kernel.config.pitchTtlDays * DAY_MS)
      const [claimed] = await tx
        .update(pitchInvitees)
        .set({ provisionedAt: now, expiresAt })
        .where(and(eq(pitchInvitees.id, found.id), isNull(pitchInvitees.provisionedAt)))
        .returning()
      if (!claimed) throw OnboardingErrors.alreadyProvisioned()
      const account = await createAccountTx(
        kernel,
        tx,
        { email: claimed.email, name: claimed.name, password: '', tenant_name: `Demo for ${claimed.name}` },
        passwordHash,
        { registration: 'bypass', token: true },
      )
      const space = await createSpaceTx(kernel, tx, emit, { tenantId: account.tenant.id, userId: account.user.id }, { slug: spaceSlug, name: `${claimed.name} demo` })
      await tx.update(pitchInvitees).set({ demoTenantId: account.tenant.id, demoSpaceSlug: space.slug }).where(eq(pitchInvitees.id, claimed.id))
      const link = await passwordResetLinkTx(kernel, tx, account.user.id, base)
      await kernel.mail.enqueue(welcomeMail(account.user.email, claimed.name, base, link, expiresAt), tx)
      return { ...account, space, expiresAt }
    })
  } catch (err) {
    if (isUniqueViolation(err, 'spaces_slug_key')) rethrowSpaceConflict(err, spaceSlug)
    rethrowAccountConflict(err)
  }
  const principal: UserPrincipal = { kind: 'user', tokenId: '', tenantId: created.tenant.id, userId: created.user.id, expiresAt: null }
  const { sample, warnings } = await sampleAfterCommit(kernel, await ownerAccess(kernel, created.space.slug, principal))
  return {
    token: created.token,
    space: created.space.slug,
    user: created.user,
    expires_at: created.expiresAt.toISOString(),
    sample_content: sample,
    warnings,
  }
}

/**
 * The daily job: every demo whose PITCH_TTL_DAYS ran out is closed (Spaces archived, tokens revoked), one
 * transaction per demo. Answers how many were closed.
 */
export async function endExpiredDemos(kernel: Kernel): Promise<number> {
  const now = kernel.clock.now()
  const due = await kernel.db.db
    .select({ id: pitchInvitees.id })
    .from(pitchInvitees)
    .where(and(isNotNull(pitchInvitees.expiresAt), lte(pitchInvitees.expiresAt, now), isNull(pitchInvitees.endedAt)))
  let ended = 0
  for (const { id } of due) {
    await transact(kernel, async (tx, emit) => {
      const [row] = await tx
        .select()
        .from(pitchInvitees)
        .where(and(eq(pitchInvitees.id, id), isNull(pitchInvitees.endedAt)))
        .for('update')
      if (!row) return
      await endDemo(kernel, tx, emit, row)
      await tx.update(pitchInvitees).set({ endedAt: kernel.clock.now() }).where(eq(pitchInvitees.id, row.id))
      ended++
    })
  }
  if (ended) kernel.logger.info(`pitch: closed ${ended} expired demo account(s)`)
  return ended
}
