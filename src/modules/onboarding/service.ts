import { and, asc, count, eq, gt, isNotNull, isNull, lte, or } from 'drizzle-orm'
import { pitchInvitees } from './tables'
import type { Principal, SpaceAccess } from '../../kernel/auth'
import { hashPassword, newCapabilityToken, randomBytes, sha256Hex } from '../../kernel/crypto'
import type { Tx } from '../../kernel/db'
import { normalizeEmail } from '../../kernel/email'
import { AppError, isUniqueViolation, notFound, uniqueAs } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { compileRule, HOUR } from '../../kernel/rate-limit'
import {
  type AuthState,
  createAccountTx,
  type FollowUpResult,
  registerUser,
  rethrowAccountConflict,
  revokeTenantTokensTx,
  type SignUpFollowUp,
  userByEmail,
} from '../auth/service'
import type { UserView } from '../auth/model'
import { archiveTenantSpacesTx, checkNewSpaceLocales, createSpaceTx, findLiveSpace, rethrowSpaceConflict, spaceSlugTaken } from '../spaces/service'
import { SpaceErrors, type SpaceView } from '../spaces/model'
import {
  MAX_INVITEES_PER_TENANT,
  type OnboardedView,
  type OnboardInput,
  OnboardingErrors,
  type PitchClaimedView,
  type PitchInviteeInput,
  type PitchInviteeView,
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

/** What an onboarding sign-up asks to follow the account: its first Space, and whether to fill it. */
interface OnboardFollowUp {
  space: OnboardInput['space']
  sample_content: boolean
}

/** What the onboarding follow-up made. */
interface OnboardMade extends FollowUpResult {
  space: SpaceView | null
  sample: SampleSummary | null
}

/**
 * The onboarding follow-up of a sign-up (registered with the auth module): the first Space (admin: the new user) in
 * the account's transaction, then the sample content after the commit. Made at once, a taken slug aborts the whole
 * sign-up (409); made from a confirmation link, the account is made anyway and the Space becomes a warning.
 */
export function onboardFollowUp(kernel: Kernel): SignUpFollowUp {
  return {
    async inTx({ tx, emit, account, payload, confirmed }): Promise<OnboardMade> {
      const { space } = payload as OnboardFollowUp
      if (confirmed && (await spaceSlugTaken(tx, space.slug))) {
        return { space: null, sample: null, warnings: [`The Space address "${space.slug}" was taken in the meantime: create a Space after signing in.`] }
      }
      const made = await createSpaceTx(kernel, tx, emit, { tenantId: account.tenant.id, userId: account.user.id }, space)
      return { space: made, sample: null, warnings: [] }
    },
    async afterCommit(account, made, payload): Promise<OnboardMade> {
      const m = made as OnboardMade
      if (!m.space || !(payload as OnboardFollowUp).sample_content) return m
      const principal: UserPrincipal = { kind: 'user', tokenId: '', tenantId: account.tenant.id, userId: account.user.id, expiresAt: null }
      const { sample, warnings } = await sampleAfterCommit(kernel, await ownerAccess(kernel, m.space.slug, principal))
      return { ...m, sample, warnings: [...m.warnings, ...warnings] }
    },
  }
}

/**
 * `POST /v1/onboard`: a sign-up (as `POST /v1/auth/register`: REGISTRATION, REGISTRATION_VERIFY, the same answer
 * for every address) whose account comes with a first Space (the user its admin) and optionally sample content. The
 * first account of the service is made at once with all of it (one transaction; 201 with a session); otherwise the
 * answer is 202, and the Space follows the account when it is made (at once, or by the confirmation link). A taken
 * Space slug is 409 before anything (it says nothing about the address). Emits `space.created`.
 */
export async function onboard(kernel: Kernel, auth: AuthState, input: OnboardInput): Promise<{ created: true; view: OnboardedView } | { created: false }> {
  checkNewSpaceLocales(input.space)
  if (await spaceSlugTaken(kernel.db.db, input.space.slug)) throw SpaceErrors.slugTaken(`The slug "${input.space.slug}" is already taken.`)
  const { space, sample_content, ...account } = input
  let outcome
  try {
    outcome = await registerUser(kernel, account, auth, { kind: ONBOARD_FOLLOW_UP, payload: { space, sample_content: !!sample_content } satisfies OnboardFollowUp })
  } catch (err) {
    rethrowSpaceConflict(err, input.space.slug)
  }
  if (!outcome.created) return { created: false }
  const made = outcome.followUp as OnboardMade
  return {
    created: true,
    view: { ...outcome.session, space: made.space!, sample_content: made.sample, warnings: made.warnings },
  }
}

export const ONBOARD_FOLLOW_UP = 'onboard'

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
    .select({ endedAt: pitchInvitees.endedAt, expiresAt: pitchInvitees.expiresAt, releasedAt: pitchInvitees.releasedAt })
    .from(pitchInvitees)
    .where(eq(pitchInvitees.demoTenantId, user.tenantId))
    .limit(1)
  if (!row || row.releasedAt !== null) return null
  const ended = row.endedAt !== null || (row.expiresAt !== null && row.expiresAt <= kernel.clock.now())
  return ended
    ? 'This demo account has ended. To keep using the address as an ordinary account, reset its password by mail; or ask the person who invited you for a new demo.'
    : null
}

/**
 * The address's owner set a new password through a mailed reset link (registered with the auth module): if the
 * user's Tenant is an ended demo, the account is released — an ordinary account from now on (its demo Spaces stay
 * archived). A demo still running is left as it is: it ends on its date.
 */
export async function releaseEndedDemoTx(kernel: Kernel, tx: Tx, user: { tenantId: number }): Promise<void> {
  const now = kernel.clock.now()
  await tx
    .update(pitchInvitees)
    .set({ releasedAt: now })
    .where(
      and(
        eq(pitchInvitees.demoTenantId, user.tenantId),
        isNull(pitchInvitees.releasedAt),
        or(isNotNull(pitchInvitees.endedAt), lte(pitchInvitees.expiresAt, now)),
      ),
    )
}

/** 403 `pitch_unavailable` unless the operator turned pitch demos on (PITCH_DEMOS) and set PUBLIC_URL for the links. */
export function assertPitchDemosOn(kernel: Kernel): string {
  if (!kernel.config.pitchDemos) throw OnboardingErrors.pitchUnavailable('Pitch demos are off on this service (PITCH_DEMOS). Ask its operator.')
  // Never the request's Host: a forged one would mail the invitee a demo link to someone else's site.
  const base = kernel.config.publicUrl
  if (!base) throw OnboardingErrors.pitchUnavailable('Pitch demos need PUBLIC_URL on this service: the invitee gets a link built from it.')
  return base
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
  assertPitchDemosOn(kernel)
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
    return uniqueAs('pitch_invitees_slug_key', () => OnboardingErrors.inviteeExists(`A pitch invitee with the slug "${input.slug}" exists already.`))(err)
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

/** How long a mailed demo link works. */
const PITCH_LINK_TTL_MS = 7 * DAY_MS

/**
 * Demo link mails per invitee: 3 an hour, whoever asks (the anonymous call knows only the slug). Over it the call
 * still answers the same 202, and nothing is mailed: nobody can flood the invitee's inbox or keep replacing the link.
 */
export const PITCH_MAILS_PER_INVITEE = compileRule({
  id: 'onboarding.pitch.invitee',
  method: 'POST',
  path: '/v1/pitch/:slug/test-account',
  limit: 3,
  windowSeconds: HOUR,
})

function demoLinkMail(to: string, name: string, base: string, link: string) {
  return {
    to,
    subject: 'Your demo is ready to start',
    text: [
      `Hello ${name},`,
      '',
      `you are invited to try ${base} with a demo account: a Space of sample content to explore.`,
      '',
      'Open this link within 7 days to choose your password and start the demo (it works once):',
      '',
      link,
      '',
      'If you did not expect this, ignore this mail: no account is made.',
    ].join('\n'),
  }
}

function demoRefusedMail(to: string, name: string, base: string) {
  return {
    to,
    subject: 'About your demo invitation',
    text: [
      `Hello ${name},`,
      '',
      `you are invited to try ${base} with a demo account, but this address has an account there already, and a demo`,
      'needs an address of its own. Nothing was changed. Sign in with your account instead:',
      '',
      `${base}/admin/`,
      '',
      'or ask the person who invited you for an invitation to another address.',
    ].join('\n'),
  }
}

/**
 * `POST /v1/pitch/{slug}/test-account` (anonymous: whoever knows the slug): mails the invitee a link that starts
 * the demo (`{PUBLIC_URL}/pitch-demo/{token}`, once, 7 days; a new call replaces it). Nothing is made and no token
 * goes to the caller: the account is made only by following the link ({@link claimPitchDemo}). An address that has
 * an account gets a mail saying a demo needs another address. Answers the same whatever the address; 3 mails an hour
 * per invitee (over it: the same answer, no mail).
 */
export async function mailPitchLink(kernel: Kernel, slug: string): Promise<void> {
  const base = assertPitchDemosOn(kernel)
  const [found] = await kernel.db.db
    .select()
    .from(pitchInvitees)
    .where(and(eq(pitchInvitees.slug, slug), isNull(pitchInvitees.deletedAt)))
    .limit(1)
  if (!found) throw notFound('Pitch invitee')
  if (found.provisionedAt !== null) throw OnboardingErrors.alreadyProvisioned()
  if (!(await kernel.rateLimiter.hit(PITCH_MAILS_PER_INVITEE, `i${found.id}`)).allowed) {
    kernel.logger.info('pitch: per-invitee mail limit reached, no mail sent')
    return
  }
  await kernel.db.db.transaction(async (tx) => {
    if (await userByEmail(tx, found.email)) {
      await kernel.mail.enqueue(demoRefusedMail(found.email, found.name, base), tx)
      return
    }
    const { token, hash } = newCapabilityToken()
    const [row] = await tx
      .update(pitchInvitees)
      .set({ claimTokenHash: hash, claimExpiresAt: new Date(kernel.clock.ms() + PITCH_LINK_TTL_MS) })
      .where(and(eq(pitchInvitees.id, found.id), isNull(pitchInvitees.provisionedAt), isNull(pitchInvitees.deletedAt)))
      .returning({ id: pitchInvitees.id })
    if (!row) return
    await kernel.mail.enqueue(demoLinkMail(found.email, found.name, base, `${base}/pitch-demo/${token}`), tx)
  })
}

const PITCH_TOKEN = /^[A-Za-z0-9_-]{43}$/

/**
 * `POST /v1/pitch/claim`: the invitee followed the mailed link and chose a password. Once per invitee, in one
 * transaction: a demo Tenant "Demo for {name}", the user (the invitee's address, whatever REGISTRATION says: the
 * Tenant admin's invitation and the mailbox admit it), a Space `{slug}-demo-{6 hex}` with the user as admin; the
 * invitee row is claimed by a conditional update, so of two claims at once one wins. Then the sample content (a
 * failure there is a warning). An address that has an account: 409 `email_taken`, nothing made. No token is
 * answered: the invitee signs in.
 */
export async function claimPitchDemo(kernel: Kernel, input: { token: string; password: string }): Promise<PitchClaimedView> {
  assertPitchDemosOn(kernel)
  const invalid = () => OnboardingErrors.pitchLinkInvalid('This demo link is invalid, used already, replaced or expired. Ask for a new one.')
  if (!PITCH_TOKEN.test(input.token)) throw invalid()
  const tokenHash = sha256Hex(input.token)
  const live = () =>
    and(
      eq(pitchInvitees.claimTokenHash, tokenHash),
      gt(pitchInvitees.claimExpiresAt, kernel.clock.now()),
      isNull(pitchInvitees.provisionedAt),
      isNull(pitchInvitees.deletedAt),
    )
  // A cheap look first, so a bad token costs no argon2 hash; the claim below decides.
  const [found] = await kernel.db.db.select({ id: pitchInvitees.id, slug: pitchInvitees.slug }).from(pitchInvitees).where(live()).limit(1)
  if (!found) throw invalid()
  const passwordHash = await hashPassword(kernel.config.passwordHash, input.password)
  const spaceSlug = `${found.slug.slice(0, 48)}-demo-${hex(3)}`
  let created
  try {
    created = await transact(kernel, async (tx, emit) => {
      const now = kernel.clock.now()
      const expiresAt = new Date(now.getTime() + kernel.config.pitchTtlDays * DAY_MS)
      const [claimed] = await tx
        .update(pitchInvitees)
        .set({ provisionedAt: now, expiresAt, claimTokenHash: null, claimExpiresAt: null })
        .where(and(eq(pitchInvitees.id, found.id), live()))
        .returning()
      if (!claimed) throw invalid()
      const account = await createAccountTx(
        kernel,
        tx,
        { email: claimed.email, name: claimed.name, password: '', tenant_name: `Demo for ${claimed.name}` },
        passwordHash,
        { registration: 'bypass', token: false },
      )
      const space = await createSpaceTx(kernel, tx, emit, { tenantId: account.tenant.id, userId: account.user.id }, { slug: spaceSlug, name: `${claimed.name} demo` })
      await tx.update(pitchInvitees).set({ demoTenantId: account.tenant.id, demoSpaceSlug: space.slug }).where(eq(pitchInvitees.id, claimed.id))
      return { ...account, space, expiresAt }
    })
  } catch (err) {
    if (isUniqueViolation(err, 'spaces_slug_key')) rethrowSpaceConflict(err, spaceSlug)
    rethrowAccountConflict(err)
  }
  const principal: UserPrincipal = { kind: 'user', tokenId: '', tenantId: created.tenant.id, userId: created.user.id, expiresAt: null }
  const { sample, warnings } = await sampleAfterCommit(kernel, await ownerAccess(kernel, created.space.slug, principal))
  return {
    user: created.user satisfies UserView,
    space: created.space.slug,
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
