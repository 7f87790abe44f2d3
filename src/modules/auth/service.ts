import { and, eq, isNull } from 'drizzle-orm'
import { apiTokens, tenants, users } from '../../../db/schema'
import type { Deps } from '../../deps'
import type { Principal } from '../../kernel/auth'
import { hashPassword, issueToken, verifyPassword } from '../../kernel/crypto'
import { AppError, conflict, isUniqueViolation, unauthorized } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import { spaceSlugById } from '../spaces/service'

const DAY_MS = 86_400_000

export interface UserView {
  id: number
  email: string
  name: string
}

export interface TenantView {
  id: number
  name: string
}

const normaliseEmail = (email: string) => email.trim().toLowerCase()

async function issueUserToken(deps: Deps, db: Pick<Deps['db']['db'], 'insert'>, userId: number, tenantId: number) {
  const t = issueToken('u')
  const now = deps.clock.now()
  const expiresAt = new Date(now.getTime() + deps.config.userTokenTtlDays * DAY_MS)
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
  deps: Deps,
  input: { email: string; password: string; name: string; tenant_name?: string },
): Promise<{ token: string; user: UserView; tenant: TenantView }> {
  const email = normaliseEmail(input.email)
  const passwordHash = await hashPassword(input.password)
  try {
    return await transact(deps, async (tx) => {
      const now = deps.clock.now()
      const [tenant] = await tx
        .insert(tenants)
        .values({ name: input.tenant_name?.trim() || `${input.name.trim()}'s workspace`, createdAt: now })
        .returning()
      const [user] = await tx
        .insert(users)
        .values({ tenantId: tenant.id, email, name: input.name.trim(), passwordHash, createdAt: now })
        .returning()
      const { token } = await issueUserToken(deps, tx, user.id, tenant.id)
      return {
        token,
        user: { id: user.id, email: user.email, name: user.name },
        tenant: { id: tenant.id, name: tenant.name },
      }
    })
  } catch (err) {
    if (isUniqueViolation(err, 'users_email_key')) throw conflict('An account with this e-mail already exists.', 'email_taken')
    throw err
  }
}

// Verified against when the e-mail is unknown, so both failures cost one argon2 verification.
let dummyHash: Promise<string> | null = null

export async function loginUser(deps: Deps, input: { email: string; password: string }) {
  const email = normaliseEmail(input.email)
  const [user] = await deps.db.db.select().from(users).where(eq(users.email, email)).limit(1)
  dummyHash ??= hashPassword('not-a-real-password-but-the-same-cost')
  const ok = await verifyPassword(input.password, user?.passwordHash ?? (await dummyHash))
  if (!user || !ok) throw new AppError(401, 'invalid_credentials', 'The e-mail or password is wrong.')
  const { token } = await issueUserToken(deps, deps.db.db, user.id, user.tenantId)
  return { token, user: { id: user.id, email: user.email, name: user.name } satisfies UserView }
}

export async function logout(deps: Deps, principal: Principal) {
  await deps.db.db
    .update(apiTokens)
    .set({ revokedAt: deps.clock.now() })
    .where(and(eq(apiTokens.id, principal.tokenId), isNull(apiTokens.revokedAt)))
}

export async function describePrincipal(deps: Deps, principal: Principal) {
  const [tenant] = await deps.db.db.select().from(tenants).where(eq(tenants.id, principal.tenantId)).limit(1)
  const userId = principal.userId
  const [user] = userId ? await deps.db.db.select().from(users).where(eq(users.id, userId)).limit(1) : []
  const token =
    principal.kind === 'user'
      ? { type: 'user' as const, expires_at: principal.expiresAt?.toISOString() ?? null }
      : {
          type: 'space' as const,
          space: await spaceSlugById(deps, principal.spaceId),
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
