import { and, eq, inArray, isNull } from 'drizzle-orm'
import { apiTokens, tenants, users } from '../../../db/schema'
import type { Principal } from '../../kernel/auth'
import { hashPassword, issueToken, verifyPassword } from '../../kernel/crypto'
import { isUniqueViolation, unauthorized } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { spaceSlugById } from '../spaces/service'
import { AuthErrors, type MeView, type SessionView, type TenantView, type UserView } from './model'

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

export async function registerUser(
  kernel: Kernel,
  input: { email: string; password: string; name: string; tenant_name?: string },
): Promise<SessionView & { tenant: TenantView }> {
  const email = normaliseEmail(input.email)
  const passwordHash = await hashPassword(input.password)
  try {
    return await transact(kernel, async (tx) => {
      const now = kernel.clock.now()
      const [tenant] = await tx
        .insert(tenants)
        .values({ name: input.tenant_name?.trim() || `${input.name.trim()}'s workspace`, createdAt: now })
        .returning()
      const [user] = await tx
        .insert(users)
        .values({ tenantId: tenant.id, email, name: input.name.trim(), passwordHash, createdAt: now })
        .returning()
      const { token } = await issueUserToken(kernel, tx, user.id, tenant.id)
      return {
        token,
        user: { id: user.id, email: user.email, name: user.name },
        tenant: { id: tenant.id, name: tenant.name },
      }
    })
  } catch (err) {
    if (isUniqueViolation(err, 'users_email_key')) throw AuthErrors.emailTaken('An account with this e-mail already exists.')
    throw err
  }
}

// Verified against when the e-mail is unknown, so both failures cost one argon2 verification.
let dummyHash: Promise<string> | null = null

export async function loginUser(kernel: Kernel, input: { email: string; password: string }): Promise<SessionView> {
  const email = normaliseEmail(input.email)
  const [user] = await kernel.db.db.select().from(users).where(eq(users.email, email)).limit(1)
  dummyHash ??= hashPassword('not-a-real-password-but-the-same-cost')
  const ok = await verifyPassword(input.password, user?.passwordHash ?? (await dummyHash))
  if (!user || !ok) throw AuthErrors.invalidCredentials('The e-mail or password is wrong.')
  const { token } = await issueUserToken(kernel, kernel.db.db, user.id, user.tenantId)
  return { token, user: { id: user.id, email: user.email, name: user.name } satisfies UserView }
}

export async function logout(kernel: Kernel, principal: Principal) {
  await kernel.db.db
    .update(apiTokens)
    .set({ revokedAt: kernel.clock.now() })
    .where(and(eq(apiTokens.id, principal.tokenId), isNull(apiTokens.revokedAt)))
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
