import { and, asc, count, eq } from 'drizzle-orm'
import { memberships } from '../../kernel/tables'
import { type Principal, type Role, ROLES, requireUserToken, type SpaceAccess } from '../../kernel/auth'
import { forbidden, notFound } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import { pageOf } from '../../kernel/http'
import type { DbOrTx, Tx } from '../../kernel/db'
import type { Kernel } from '../../kernel/kernel'
import type { RouteSummary } from '../../kernel/module'
import { describePrincipal, type UserRef, usersByIds } from '../auth/service'
import { findLiveSpace, listSpaces } from '../spaces/service'
import { MemberErrors, type MemberView, type RoleView, type WhoamiPlanView, type WhoamiView } from './model'

interface MemberRow extends UserRef {
  role: string
  createdAt: Date
}

const memberView = (r: MemberRow): MemberView => ({
  user: { id: r.id, name: r.name, email: r.email },
  role: r.role as Role,
  joined_at: r.createdAt.toISOString(),
})

/** Memberships with their users' names and addresses (from the auth service); a user gone meanwhile is left out. */
async function withUsers(db: DbOrTx, rows: { userId: number; role: string; createdAt: Date }[]): Promise<MemberRow[]> {
  const people = await usersByIds(db, rows.map((r) => r.userId))
  return rows.flatMap((r) => {
    const user = people.get(r.userId)
    return user ? [{ ...user, role: r.role, createdAt: r.createdAt }] : []
  })
}

/** The members of a Space with their e-mail addresses, oldest first (admin: personal data). */
export async function listMembers(kernel: Kernel, access: SpaceAccess, query: { page?: number; per_page?: number }) {
  const { page, perPage, offset } = pageOf(query.page, query.per_page, { perPage: 50, max: 100 })
  const db = kernel.db.db
  const [rows, [{ total }]] = await Promise.all([
    db
      .select({ userId: memberships.userId, role: memberships.role, createdAt: memberships.createdAt })
      .from(memberships)
      .where(eq(memberships.spaceId, access.space.id))
      .orderBy(asc(memberships.createdAt), asc(memberships.userId))
      .limit(perPage)
      .offset(offset),
    db.select({ total: count() }).from(memberships).where(eq(memberships.spaceId, access.space.id)),
  ])
  return { data: (await withUsers(db, rows)).map(memberView), meta: { total: Number(total), page, per_page: perPage } }
}

/** `me` is the caller (a user token only: a Space-scoped token is nobody's membership). */
function resolveUserId(principal: Principal, userId: string): number {
  if (userId !== 'me') return Number(userId)
  requireUserToken(principal) // a Space-scoped token is nobody's membership: 403 user_required
  return principal.userId
}

/**
 * Locks the Space's admin memberships for the rest of the transaction, so two admins demoting or removing each
 * other at once are serialised: the second sees the first's change and meets `last_admin`.
 */
async function lockAdmins(tx: Tx, spaceId: number): Promise<number[]> {
  const rows = await tx
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.spaceId, spaceId), eq(memberships.role, 'admin')))
    .orderBy(asc(memberships.userId))
    .for('update')
  return rows.map((r) => r.userId)
}

async function memberRow(tx: Tx, spaceId: number, userId: number): Promise<MemberRow | undefined> {
  const rows = await tx
    .select({ userId: memberships.userId, role: memberships.role, createdAt: memberships.createdAt })
    .from(memberships)
    .where(and(eq(memberships.spaceId, spaceId), eq(memberships.userId, userId)))
    .for('update')
  return (await withUsers(tx, rows))[0]
}

/** Who made a change: the user, or for a Space-scoped token the user who created it. */
const actorOf = (p: Principal) => ({ user_id: p.userId })

/** Changes a member's role (admin). Demoting the last admin answers 409 `last_admin`. */
export async function changeMemberRole(kernel: Kernel, access: SpaceAccess, userIdParam: string, role: Role): Promise<MemberView> {
  const userId = resolveUserId(access.principal, userIdParam)
  return transact(kernel, async (tx, emit) => {
    const admins = await lockAdmins(tx, access.space.id)
    const row = await memberRow(tx, access.space.id, userId)
    if (!row) throw notFound('Member')
    if (row.role === role) return memberView(row)
    if (row.role === 'admin' && admins.length <= 1) throw MemberErrors.lastAdmin()
    await tx
      .update(memberships)
      .set({ role })
      .where(and(eq(memberships.spaceId, access.space.id), eq(memberships.userId, userId)))
    emit({
      type: 'member.role_changed',
      spaceId: access.space.id,
      payload: { member: { user_id: row.id, email: row.email, name: row.name, role }, previous_role: row.role as Role, by: actorOf(access.principal) },
    })
    return memberView({ ...row, role })
  })
}

/**
 * Ends a membership (admin; or the member themselves through `me`). Access ends with the commit: every guard reads
 * memberships from the database, on every instance, so the next request of that user for the Space answers 404.
 */
export async function removeMember(kernel: Kernel, access: SpaceAccess, userIdParam: string): Promise<void> {
  const userId = resolveUserId(access.principal, userIdParam)
  const self = access.principal.kind === 'user' && access.principal.userId === userId
  if (!self && access.role !== 'admin') throw forbidden('Removing another member needs the admin role in this Space.')
  await transact(kernel, async (tx, emit) => {
    const admins = await lockAdmins(tx, access.space.id)
    const row = await memberRow(tx, access.space.id, userId)
    if (!row) throw notFound('Member')
    if (row.role === 'admin' && admins.length <= 1) throw MemberErrors.lastAdmin()
    await tx.delete(memberships).where(and(eq(memberships.spaceId, access.space.id), eq(memberships.userId, userId)))
    emit({
      type: 'member.removed',
      spaceId: access.space.id,
      payload: { member: { user_id: row.id, email: row.email, name: row.name, role: row.role as Role }, by: actorOf(access.principal) },
    })
  })
}

const ROLE_DESCRIPTIONS: Record<Role, string> = {
  viewer: 'Reads the Space\'s content: Stories, blueprints, locales, assets, datasources, forms, events, products; reads presence and comments; reads aggregated analytics. No personal data.',
  editor: 'Viewer rights, plus writes content: Stories, assets, segments and variants, datasource entries, forms, events, products; posts comments and edits or deletes its own.',
  admin: 'Editor rights, plus runs the Space: settings, locales, tokens, members and invitations, webhooks; reads and acts on personal data (members\' e-mail addresses, subscribers, form submissions, event registrations, orders, and their CSV exports); edits or deletes any comment and resolves any thread.',
}

/** The three roles with the operations each adds, read from the routes' own guards (so it cannot drift from them). */
export function describeRoles(routes: readonly RouteSummary[]): RoleView[] {
  return ROLES.map((role, i) => ({
    role,
    description: ROLE_DESCRIPTIONS[role],
    includes: i > 0 ? ROLES[i - 1] : null,
    operations: routes
      .filter((r) => r.minRole === role)
      .map((r) => ({ method: r.method, path: r.path, summary: r.summary }))
      .sort((a, b) => (a.path === b.path ? a.method.localeCompare(b.method) : a.path.localeCompare(b.path))),
  }))
}

/** Everything a CLI or the admin app needs after login, in one call. */
export async function whoami(
  kernel: Kernel,
  principal: Principal,
  planOf: ((tenantId: number) => Promise<WhoamiPlanView>) | null = null,
): Promise<WhoamiView> {
  const me = await describePrincipal(kernel, principal)
  const plan = planOf ? await planOf(principal.tenantId) : null
  if (principal.kind === 'space') {
    const space = me.token.type === 'space' && me.token.space ? await findLiveSpace(kernel, me.token.space) : null
    return {
      user: null,
      tenant: me.tenant,
      token: { type: 'space', ...(space ? { space: space.slug } : {}), role: principal.role, expires_at: me.token.expires_at },
      spaces: space ? [{ slug: space.slug, name: space.name, role: principal.role }] : [],
      plan,
    }
  }
  const spaces = await listSpaces(kernel, principal)
  return {
    user: me.id !== null && me.email !== null && me.name !== null ? { id: me.id, email: me.email, name: me.name } : null,
    tenant: me.tenant,
    token: { type: 'user', expires_at: me.token.expires_at },
    spaces: spaces.filter((s) => !s.archived).map((s) => ({ slug: s.slug, name: s.name, role: s.role })),
    plan,
  }
}
