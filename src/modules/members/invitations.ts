import { and, asc, count, eq, gt, lte } from 'drizzle-orm'
import { memberships } from '../../kernel/tables'
import { invitations } from './tables'
import type { Principal, Role, SpaceAccess } from '../../kernel/auth'
import { newCapabilityToken, sha256Hex } from '../../kernel/crypto'
import { normalizeEmail } from '../../kernel/email'
import type { Tx } from '../../kernel/db'
import { notFound, uniqueAs } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { MailErrors } from '../../kernel/mail'
import { userByEmail, usersByIds } from '../auth/service'
import { lockSpace, spacesByIds } from '../spaces/service'
import { InvitationErrors, type InvitationPreviewView, type InvitationView } from './model'

export const INVITATION_TTL_MS = 7 * 24 * 3_600_000
export const MAX_PENDING_INVITATIONS = 50

type InvitationRow = typeof invitations.$inferSelect

/** `ada@example.com` → `a•••@example.com`: enough for the invitee to recognise, too little to harvest. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@')
  return `${email.slice(0, 1)}•••${email.slice(at)}`
}

function view(row: InvitationRow, inviter: { id: number; name: string } | null): InvitationView {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    status: row.status,
    invited_by: inviter,
    created_at: row.createdAt.toISOString(),
    sent_at: row.sentAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
  }
}

/** Pending invitations whose week ran out become `expired` (so the address can be invited again). */
async function expireDue(kernel: Kernel, tx: Tx, spaceId: number) {
  const now = kernel.clock.now()
  await tx
    .update(invitations)
    .set({ status: 'expired', endedAt: now })
    .where(and(eq(invitations.spaceId, spaceId), eq(invitations.status, 'pending'), lte(invitations.expiresAt, now)))
}

interface MailContext {
  /** Base of the link: PUBLIC_URL (never the request's origin: a forged Host would get the invitee's token). */
  base: string
  inviter: string
  space: { name: string; slug: string }
}

function invitationMail(to: string, token: string, role: Role, expiresAt: Date, ctx: MailContext) {
  const link = `${ctx.base}/invite/${token}`
  return {
    to,
    subject: `${ctx.inviter} invited you to ${ctx.space.name}`,
    text: [
      `${ctx.inviter} invited you to join the Space "${ctx.space.name}" as ${role}.`,
      '',
      `Open this link to accept or decline: ${link}`,
      '',
      `Without an account for ${to} yet, register with this address first, then open the link.`,
      `The invitation works once and ends on ${expiresAt.toUTCString()}.`,
      '',
      'If you did not expect this, ignore this mail.',
    ].join('\n'),
  }
}

/** PUBLIC_URL, the base of the mailed link; without it no invitation can be mailed: 403 mail_links_unavailable. */
function invitationLinkBase(kernel: Kernel): string {
  const base = kernel.mail.linkBase()
  if (!base) throw MailErrors.linksUnavailable('Invitations are mailed as a link, and this service has no PUBLIC_URL to build it from. Its operator sets PUBLIC_URL.')
  return base
}

async function inviterName(kernel: Kernel, principal: Principal): Promise<{ id: number; name: string } | null> {
  if (principal.userId === null) return null
  const u = (await usersByIds(kernel.db.db, [principal.userId])).get(principal.userId)
  return u ? { id: u.id, name: u.name } : null
}

/** Invites an address to the Space (admin): 201 with the invitation; the mail is queued with it. */
export async function createInvitation(
  kernel: Kernel,
  access: SpaceAccess,
  input: { email: string; role: Role },
): Promise<InvitationView> {
  const base = invitationLinkBase(kernel)
  // The body schema checked the address already; the kernel's rule gives it the form every module stores.
  const email = normalizeEmail(input.email) ?? input.email.trim().toLowerCase()
  const inviter = await inviterName(kernel, access.principal)
  try {
    return await kernel.db.db.transaction(async (tx) => {
      // One admin's invitations are counted against the limit one at a time: the Space row is the lock.
      await lockSpace(tx, access.space.id)
      await expireDue(kernel, tx, access.space.id)
      const account = await userByEmail(tx, email)
      if (account) {
        const [member] = await tx
          .select({ userId: memberships.userId })
          .from(memberships)
          .where(and(eq(memberships.spaceId, access.space.id), eq(memberships.userId, account.id)))
        if (member) throw InvitationErrors.alreadyMember()
      }
      const [{ pending }] = await tx
        .select({ pending: count() })
        .from(invitations)
        .where(and(eq(invitations.spaceId, access.space.id), eq(invitations.status, 'pending')))
      if (Number(pending) >= MAX_PENDING_INVITATIONS) throw InvitationErrors.invitationLimit()
      const now = kernel.clock.now()
      const { token, hash } = newCapabilityToken()
      const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS)
      const [row] = await tx
        .insert(invitations)
        .values({
          spaceId: access.space.id,
          email,
          role: input.role,
          tokenHash: hash,
          status: 'pending',
          invitedBy: inviter?.id ?? null,
          expiresAt,
          sentAt: now,
          createdAt: now,
        })
        .returning()
      await kernel.mail.enqueue(
        invitationMail(email, token, input.role, expiresAt, { base, inviter: inviter?.name ?? access.space.name, space: access.space }),
        tx,
      )
      return view(row, inviter)
    })
  } catch (err) {
    return uniqueAs('invitations_pending_key', () => InvitationErrors.invitationPending())(err)
  }
}

/** The pending invitations of a Space, oldest first (admin). */
export async function listInvitations(kernel: Kernel, access: SpaceAccess): Promise<InvitationView[]> {
  const now = kernel.clock.now()
  const rows = (
    await kernel.db.db
      .select()
      .from(invitations)
      .where(and(eq(invitations.spaceId, access.space.id), eq(invitations.status, 'pending')))
      .orderBy(asc(invitations.createdAt), asc(invitations.id))
  ).filter((r) => r.expiresAt > now)
  const inviters = await usersByIds(kernel.db.db, rows.flatMap((r) => (r.invitedBy !== null ? [r.invitedBy] : [])))
  return rows.map((r) => {
    const inviter = r.invitedBy !== null ? inviters.get(r.invitedBy) : undefined
    return view(r, inviter ? { id: inviter.id, name: inviter.name } : null)
  })
}

async function pendingById(tx: Tx, spaceId: number, id: number, now: Date): Promise<InvitationRow> {
  const [row] = await tx
    .select()
    .from(invitations)
    .where(and(eq(invitations.id, id), eq(invitations.spaceId, spaceId), eq(invitations.status, 'pending')))
    .for('update')
  if (!row || row.expiresAt <= now) throw notFound('Invitation')
  return row
}

/** Revokes a pending invitation (admin): its link answers 404 from then on. */
export async function revokeInvitation(kernel: Kernel, access: SpaceAccess, id: number): Promise<void> {
  await kernel.db.db.transaction(async (tx) => {
    const now = kernel.clock.now()
    const row = await pendingById(tx, access.space.id, id, now)
    await tx.update(invitations).set({ status: 'revoked', endedAt: now }).where(eq(invitations.id, row.id))
  })
}

/** Sends a pending invitation again with a fresh token and a fresh week; the old link stops working. */
export async function resendInvitation(kernel: Kernel, access: SpaceAccess, id: number): Promise<InvitationView> {
  const base = invitationLinkBase(kernel)
  const inviter = await inviterName(kernel, access.principal)
  return kernel.db.db.transaction(async (tx) => {
    const now = kernel.clock.now()
    const row = await pendingById(tx, access.space.id, id, now)
    const { token, hash } = newCapabilityToken()
    const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS)
    const [updated] = await tx
      .update(invitations)
      .set({ tokenHash: hash, expiresAt, sentAt: now })
      .where(eq(invitations.id, row.id))
      .returning()
    await kernel.mail.enqueue(
      invitationMail(row.email, token, row.role, expiresAt, { base, inviter: inviter?.name ?? access.space.name, space: access.space }),
      tx,
    )
    const original = row.invitedBy !== null ? (await usersByIds(tx, [row.invitedBy])).get(row.invitedBy) : undefined
    return view(updated, original ? { id: original.id, name: original.name } : null)
  })
}

/** A live invitation by its link token; unknown, used, revoked, declined and expired tokens are all null. */
async function liveByToken(kernel: Kernel, db: Tx | Kernel['db']['db'], token: string, lock = false) {
  const q = db
    .select()
    .from(invitations)
    .where(and(eq(invitations.tokenHash, sha256Hex(token)), eq(invitations.status, 'pending')))
  const [inv] = lock ? await q.for('update') : await q
  if (!inv || inv.expiresAt <= kernel.clock.now()) return null
  const space = (await spacesByIds(db, [inv.spaceId])).get(inv.spaceId)
  if (!space || space.archived) return null
  return { inv, space }
}

/** What the invitation page shows before anyone signs in (anonymous). */
export async function previewInvitation(kernel: Kernel, token: string): Promise<InvitationPreviewView> {
  const row = await liveByToken(kernel, kernel.db.db, token)
  if (!row) throw notFound('Invitation')
  const inviter = row.inv.invitedBy !== null ? (await usersByIds(kernel.db.db, [row.inv.invitedBy])).get(row.inv.invitedBy) : undefined
  const account = (await userByEmail(kernel.db.db, row.inv.email)) ?? undefined
  return {
    space: { slug: row.space.slug, name: row.space.name },
    role: row.inv.role,
    invited_by: { name: inviter?.name ?? row.space.name },
    email: maskEmail(row.inv.email),
    expires_at: row.inv.expiresAt.toISOString(),
    account_exists: account !== undefined,
  }
}

/**
 * Accepts an invitation as the signed-in user, whose e-mail must be the invited one. The membership is created and
 * the token spent in one transaction; of two accepts at once one wins and the other finds no live invitation (404).
 * A user of another Tenant may accept: membership is per Space.
 */
export async function acceptInvitation(kernel: Kernel, principal: Extract<Principal, { kind: 'user' }>, token: string) {
  return transact(kernel, async (tx, emit) => {
    const row = await liveByToken(kernel, tx, token, true)
    if (!row) throw notFound('Invitation')
    const user = (await usersByIds(tx, [principal.userId])).get(principal.userId)
    if (!user) throw notFound('Invitation')
    if (user.email !== row.inv.email) throw InvitationErrors.emailMismatch()
    const now = kernel.clock.now()
    const [existing] = await tx
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.spaceId, row.space.id), eq(memberships.userId, user.id)))
    if (existing) throw InvitationErrors.alreadyMember()
    await tx.insert(memberships).values({ userId: user.id, spaceId: row.space.id, role: row.inv.role, createdAt: now })
    await tx.update(invitations).set({ status: 'accepted', acceptedBy: user.id, endedAt: now }).where(eq(invitations.id, row.inv.id))
    emit({
      type: 'member.added',
      spaceId: row.space.id,
      payload: { member: { user_id: user.id, email: user.email, name: user.name, role: row.inv.role }, by: { user_id: row.inv.invitedBy } },
    })
    return { space: { slug: row.space.slug, name: row.space.name }, role: row.inv.role }
  })
}

/** Declines an invitation (anonymous: the link is the capability); the token is spent. */
export async function declineInvitation(kernel: Kernel, token: string): Promise<void> {
  await kernel.db.db.transaction(async (tx) => {
    const row = await liveByToken(kernel, tx, token, true)
    if (!row) throw notFound('Invitation')
    await tx.update(invitations).set({ status: 'declined', endedAt: kernel.clock.now() }).where(eq(invitations.id, row.inv.id))
  })
}


/**
 * Whether `email` has a live invitation to some Space: such an address may sign up while REGISTRATION refuses
 * walk-ins (`first-user`, `closed`), so an invitation works on a closed service. Asked inside the sign-up transaction.
 */
export async function hasLiveInvitation(kernel: Kernel, tx: Tx, email: string): Promise<boolean> {
  const rows = await tx
    .select({ spaceId: invitations.spaceId })
    .from(invitations)
    .where(and(eq(invitations.email, normalizeEmail(email) ?? email.trim().toLowerCase()), eq(invitations.status, 'pending'), gt(invitations.expiresAt, kernel.clock.now())))
  if (!rows.length) return false
  const live = await spacesByIds(tx, rows.map((r) => r.spaceId))
  return [...live.values()].some((s) => !s.archived)
}
