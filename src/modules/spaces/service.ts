import { and, asc, desc, eq, inArray, isNull } from 'drizzle-orm'
import { apiTokens, memberships, spaceLocales, spaces } from '../../kernel/tables'
import type { Principal, Role, SpaceAccess, SpaceRef } from '../../kernel/auth'
import { issueToken } from '../../kernel/crypto'
import { notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import { type Emit, transact } from '../../kernel/events'
import type { DbOrTx, Tx } from '../../kernel/db'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { SpaceErrors, type SpaceTokenView, type SpaceView } from './model'

function view(space: SpaceRef, locales: string[], role: Role): SpaceView {
  return {
    slug: space.slug,
    name: space.name,
    default_lang: space.defaultLang,
    locales,
    preview_url: space.previewUrl,
    role,
    archived: space.archivedAt !== null,
    archived_at: space.archivedAt?.toISOString() ?? null,
    created_at: space.createdAt.toISOString(),
    updated_at: space.updatedAt.toISOString(),
  }
}

async function localesOf(db: Kernel['db']['db'] | Tx, spaceIds: number[]): Promise<Map<number, string[]>> {
  const map = new Map<number, string[]>()
  if (!spaceIds.length) return map
  const rows = await db
    .select({ spaceId: spaceLocales.spaceId, code: spaceLocales.code })
    .from(spaceLocales)
    .where(inArray(spaceLocales.spaceId, spaceIds))
    .orderBy(asc(spaceLocales.position), asc(spaceLocales.code))
  for (const r of rows) {
    const list = map.get(r.spaceId) ?? []
    list.push(r.code)
    map.set(r.spaceId, list)
  }
  return map
}

/** Validates and canonicalises a list of locale tags; the default must be one of them. */
function normaliseLocales(defaultLang: string, locales: string[] | undefined): { defaultLang: string; locales: string[] } {
  const errors: Record<string, string[]> = {}
  const def = canonicalLocale(defaultLang)
  if (!def) errors.default_lang = [`"${defaultLang}" is not a valid BCP-47 language tag.`]
  const list: string[] = []
  for (const [i, raw] of (locales ?? []).entries()) {
    const c = canonicalLocale(raw)
    if (!c) (errors[`locales/${i}`] ??= []).push(`"${raw}" is not a valid BCP-47 language tag.`)
    else if (!list.includes(c)) list.push(c)
  }
  if (Object.keys(errors).length) throw validationFailed(errors)
  if (!list.includes(def!)) list.unshift(def!)
  return { defaultLang: def!, locales: list }
}

export interface NewSpaceInput {
  slug: string
  name: string
  default_lang?: string
  locales?: string[]
}

export async function createSpace(
  kernel: Kernel,
  principal: Extract<Principal, { kind: 'user' }>,
  input: NewSpaceInput,
): Promise<SpaceView> {
  try {
    return await transact(kernel, (tx, emit) => createSpaceTx(kernel, tx, emit, { tenantId: principal.tenantId, userId: principal.userId }, input))
  } catch (err) {
    rethrowSpaceConflict(err, input.slug)
  }
}

/**
 * A Space of `owner.tenantId` with `owner.userId` as its admin, inside the caller's transaction (emits
 * `space.created` through the caller's `emit`): onboarding creates the account and its first Space in one
 * transaction. Bad locales are 422 before anything is written; a taken slug aborts the transaction with a unique
 * violation, which the caller maps with {@link rethrowSpaceConflict} after the rollback.
 */
export async function createSpaceTx(
  kernel: Kernel,
  tx: Tx,
  emit: Emit,
  owner: { tenantId: number; userId: number },
  input: NewSpaceInput,
): Promise<SpaceView> {
  const { defaultLang, locales } = normaliseLocales(input.default_lang ?? 'en', input.locales)
  const now = kernel.clock.now()
  const [space] = await tx
    .insert(spaces)
    .values({ tenantId: owner.tenantId, slug: input.slug, name: input.name, defaultLang, createdAt: now, updatedAt: now })
    .returning()
  await tx.insert(spaceLocales).values(locales.map((code, position) => ({ spaceId: space.id, code, position, createdAt: now })))
  await tx.insert(memberships).values({ userId: owner.userId, spaceId: space.id, role: 'admin', createdAt: now })
  emit({
    type: 'space.created',
    spaceId: space.id,
    payload: { space: { slug: space.slug, name: space.name, default_lang: defaultLang, locales } },
  })
  return view(space, locales, 'admin')
}

/** Whether a Space (live or archived: slugs stay taken) has this slug. */
export async function spaceSlugTaken(db: DbOrTx, slug: string): Promise<boolean> {
  const [row] = await db.select({ id: spaces.id }).from(spaces).where(eq(spaces.slug, slug)).limit(1)
  return !!row
}

/** Checks the locales of a new Space as {@link createSpaceTx} will (422 validation_failed), before any transaction. */
export function checkNewSpaceLocales(input: { default_lang?: string; locales?: string[] }): void {
  normaliseLocales(input.default_lang ?? 'en', input.locales)
}

/** A taken slug (the unique violation of a rolled-back Space insert) as 409 slug_taken; anything else as is. */
export function rethrowSpaceConflict(err: unknown, slug: string): never {
  return uniqueAs('spaces_slug_key', () => SpaceErrors.slugTaken(`The slug "${slug}" is already taken.`))(err)
}

/**
 * Archives every live Space of a Tenant inside the caller's transaction (each emits `space.archived`): how a module
 * that closes a Tenant (expired pitch demos) takes its Spaces off the public surface. Answers the archived slugs.
 */
export async function archiveTenantSpacesTx(kernel: Kernel, tx: Tx, emit: Emit, tenantId: number): Promise<string[]> {
  const now = kernel.clock.now()
  const rows = await tx
    .update(spaces)
    .set({ archivedAt: now, updatedAt: now })
    .where(and(eq(spaces.tenantId, tenantId), isNull(spaces.archivedAt)))
    .returning()
  for (const space of rows) {
    emit({
      type: 'space.archived',
      spaceId: space.id,
      payload: { space: { slug: space.slug, name: space.name, archived_at: now.toISOString() } },
    })
  }
  return rows.map((r) => r.slug)
}

export async function listSpaces(kernel: Kernel, principal: Extract<Principal, { kind: 'user' }>): Promise<SpaceView[]> {
  const rows = await kernel.db.db
    .select({ space: spaces, role: memberships.role })
    .from(spaces)
    // Every Space the user is a member of, in their own Tenant and in others they were invited into.
    .innerJoin(memberships, and(eq(memberships.spaceId, spaces.id), eq(memberships.userId, principal.userId)))
    .orderBy(desc(spaces.createdAt), desc(spaces.id))
  const locales = await localesOf(
    kernel.db.db,
    rows.map((r) => r.space.id),
  )
  return rows.map((r) => view(r.space, locales.get(r.space.id) ?? [], r.role as Role))
}

export async function getSpace(kernel: Kernel, access: SpaceAccess): Promise<SpaceView> {
  const locales = await localesOf(kernel.db.db, [access.space.id])
  return view(access.space, locales.get(access.space.id) ?? [], access.role)
}

/**
 * A preview URL as stored: an absolute http(s) URL without credentials or fragment (the Preview button appends the
 * Story's path and its own fragment), in its normalised form.
 */
function previewUrlOf(raw: string, adminOrigin: string | null): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw validationFailed({ preview_url: ['must be an absolute http:// or https:// URL'] })
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validationFailed({ preview_url: ['must be an absolute http:// or https:// URL'] })
  if (url.username || url.password) throw validationFailed({ preview_url: ['must not carry a user name or password'] })
  if (url.hash) throw validationFailed({ preview_url: ['must not have a fragment (#…): the Preview button adds its own'] })
  // The visual editor frames the site: a site on the admin app's own origin could script the app around it.
  if (adminOrigin && url.origin === adminOrigin) throw validationFailed({ preview_url: ["must not be on the admin app's own origin (the visual editor frames the site)"] })
  return url.href
}

export async function updateSpace(
  kernel: Kernel,
  access: SpaceAccess,
  input: { name?: string; default_lang?: string; preview_url?: string | null },
  adminOrigin: string | null = null,
): Promise<SpaceView> {
  return transact(kernel, async (tx, emit) => {
    const patch: Partial<typeof spaces.$inferInsert> = { updatedAt: kernel.clock.now() }
    if (input.name !== undefined) patch.name = input.name
    if (input.preview_url !== undefined) patch.previewUrl = input.preview_url === null ? null : previewUrlOf(input.preview_url, adminOrigin)
    if (input.default_lang !== undefined) {
      const def = canonicalLocale(input.default_lang)
      if (!def) throw validationFailed({ default_lang: [`"${input.default_lang}" is not a valid BCP-47 language tag.`] })
      const current = (await localesOf(tx, [access.space.id])).get(access.space.id) ?? []
      if (!current.includes(def)) {
        throw validationFailed({ default_lang: [`"${def}" is not one of this Space's locales (${current.join(', ')}).`] })
      }
      patch.defaultLang = def
    }
    const [space] = await tx.update(spaces).set(patch).where(eq(spaces.id, access.space.id)).returning()
    if (input.name !== undefined || input.default_lang !== undefined || input.preview_url !== undefined) {
      emit({ type: 'space.updated', spaceId: space.id, payload: { space: { slug: space.slug } } })
    }
    const locales = await localesOf(tx, [space.id])
    return view(space, locales.get(space.id) ?? [], access.role)
  })
}

export async function archiveSpace(kernel: Kernel, access: SpaceAccess): Promise<SpaceView> {
  return transact(kernel, async (tx, emit) => {
    const now = kernel.clock.now()
    // Only the first archive changes anything and emits; archiving again answers the archived Space as it is.
    const [space] = await tx
      .update(spaces)
      .set({ archivedAt: now, updatedAt: now })
      .where(and(eq(spaces.id, access.space.id), isNull(spaces.archivedAt)))
      .returning()
    if (space) {
      emit({
        type: 'space.archived',
        spaceId: space.id,
        payload: { space: { slug: space.slug, name: space.name, archived_at: now.toISOString() } },
      })
    }
    const current = space ?? access.space
    const locales = await localesOf(tx, [current.id])
    return view(current, locales.get(current.id) ?? [], access.role)
  })
}

export async function spaceSlugById(kernel: Pick<Kernel, 'db'>, spaceId: number): Promise<string | null> {
  const [row] = await kernel.db.db.select({ slug: spaces.slug }).from(spaces).where(eq(spaces.id, spaceId)).limit(1)
  return row?.slug ?? null
}

/** A Space's id, slug and name by id (archived included), or null: how other modules name a Space they hold the id of. */
export async function spaceNameById(kernel: Pick<Kernel, 'db'>, spaceId: number): Promise<{ id: number; slug: string; name: string } | null> {
  const [row] = await kernel.db.db.select({ id: spaces.id, slug: spaces.slug, name: spaces.name }).from(spaces).where(eq(spaces.id, spaceId)).limit(1)
  return row ?? null
}

/** Spaces by id (archived included), inside the caller's transaction when given one. Unknown ids are absent. */
export async function spacesByIds(
  db: DbOrTx,
  ids: number[],
): Promise<Map<number, { id: number; tenantId: number; slug: string; name: string; archived: boolean }>> {
  const unique = [...new Set(ids)]
  if (!unique.length) return new Map()
  const rows = await db
    .select({ id: spaces.id, tenantId: spaces.tenantId, slug: spaces.slug, name: spaces.name, archivedAt: spaces.archivedAt })
    .from(spaces)
    .where(inArray(spaces.id, unique))
  return new Map(rows.map((r) => [r.id, { id: r.id, tenantId: r.tenantId, slug: r.slug, name: r.name, archived: r.archivedAt !== null }]))
}

/**
 * Locks a Space's row until the caller's transaction ends: work another module counts per Space (pending
 * invitations against their limit) is serialised on it.
 */
export async function lockSpace(tx: Tx, spaceId: number): Promise<void> {
  await tx.select({ id: spaces.id }).from(spaces).where(eq(spaces.id, spaceId)).for('update')
}

/** A live (not archived) Space by slug, or null. The public surface reads PublicSpaces (public.ts) instead. */
/** A live (not archived) Space's id and slug by id, or null: one query for modules that hold the id. */
export async function liveSpaceById(kernel: Pick<Kernel, 'db'>, spaceId: number): Promise<{ id: number; slug: string } | null> {
  const [row] = await kernel.db.db
    .select({ id: spaces.id, slug: spaces.slug })
    .from(spaces)
    .where(and(eq(spaces.id, spaceId), isNull(spaces.archivedAt)))
    .limit(1)
  return row ?? null
}

export async function findLiveSpace(kernel: Pick<Kernel, 'db'>, slug: string): Promise<SpaceRef | null> {
  const [row] = await kernel.db.db
    .select()
    .from(spaces)
    .where(and(eq(spaces.slug, slug), isNull(spaces.archivedAt)))
    .limit(1)
  return row ?? null
}

// ---- Space-scoped API tokens ----

const INSTANT_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|([+-])(\d{2}):(\d{2}))$/i

/**
 * An ISO 8601 date-time with Z or an offset, every part in range (no 30 February, no 24:00, no rolling over), as a
 * Date; null otherwise. A time without an offset is refused: it would mean another instant on every server.
 */
export function parseDateTime(text: string): Date | null {
  const m = INSTANT_RE.exec(text)
  if (!m) return null
  const [year, month, day, hour, minute] = m.slice(1, 6).map(Number)
  const second = m[6] ? Number(m[6]) : 0
  const [offH, offM] = m[7] ? [Number(m[8]), Number(m[9])] : [0, 0]
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate()
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59 || offH > 23 || offM > 59) return null
  const d = new Date(text)
  return Number.isNaN(d.getTime()) || year < 1970 ? null : d
}

/** The one place a Space token's `expires_at` is read: a date-time in the future, or null (no expiry). */
function tokenExpiry(kernel: Kernel, value: string | null | undefined): Date | null {
  if (value === undefined || value === null) return null
  const at = parseDateTime(value)
  if (!at) throw validationFailed({ expires_at: ['must be an ISO 8601 date-time with Z or an offset (e.g. 2027-01-31T18:00:00Z), every part in range'] })
  if (at.getTime() <= kernel.clock.ms()) throw validationFailed({ expires_at: ['must be in the future'] })
  return at
}

export async function createSpaceToken(
  kernel: Kernel,
  access: SpaceAccess,
  input: { name: string; role: Role; expires_at?: string | null },
): Promise<SpaceTokenView & { token: string }> {
  const expiresAt = tokenExpiry(kernel, input.expires_at)
  const t = issueToken('s')
  const now = kernel.clock.now()
  const [row] = await kernel.db.db
    .insert(apiTokens)
    .values({
      id: t.id,
      secretHash: t.secretHash,
      kind: 'space',
      tenantId: access.space.tenantId,
      spaceId: access.space.id,
      role: input.role,
      name: input.name,
      createdBy: access.principal.userId,
      expiresAt,
      createdAt: now,
    })
    .returning()
  return { ...tokenView(row), token: t.token }
}

function tokenView(row: typeof apiTokens.$inferSelect): SpaceTokenView {
  return {
    id: row.id,
    name: row.name ?? '',
    role: row.role as Role,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt?.toISOString() ?? null,
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    created_by: row.createdBy,
  }
}

/** The Space's tokens not revoked, newest first; an expired one stays listed (its `expires_at` says why it fails). */
export async function listSpaceTokens(kernel: Kernel, access: SpaceAccess): Promise<SpaceTokenView[]> {
  const rows = await kernel.db.db
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.spaceId, access.space.id), eq(apiTokens.kind, 'space'), isNull(apiTokens.revokedAt)))
    .orderBy(desc(apiTokens.createdAt))
  return rows.map(tokenView)
}

export async function revokeSpaceToken(kernel: Kernel, access: SpaceAccess, id: string): Promise<void> {
  await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .update(apiTokens)
      .set({ revokedAt: kernel.clock.now() })
      .where(
        and(eq(apiTokens.id, id), eq(apiTokens.spaceId, access.space.id), eq(apiTokens.kind, 'space'), isNull(apiTokens.revokedAt)),
      )
      .returning({ id: apiTokens.id })
    if (!row) throw notFound('Token')
    emit({ type: 'space_token.revoked', spaceId: access.space.id, payload: { token_ids: [row.id], reason: 'revoked' } })
  })
}

const RANKS: readonly Role[] = ['viewer', 'editor', 'admin']

/**
 * A member left the Space, was removed, or was demoted: the Space tokens they created go with the access they had
 * (`member.removed`, `member.role_changed`, in the membership change's transaction). Removed: every token they
 * created in the Space; demoted to `role`: those whose role is above it (a token never gives its creator more than
 * their own membership does). Emits `space_token.revoked` so open streams of these tokens end on every instance.
 */
export async function revokeTokensOfMemberIn(
  kernel: Kernel,
  tx: Tx,
  emit: Emit,
  spaceId: number,
  userId: number,
  keepUpTo: Role | null,
): Promise<string[]> {
  const above = keepUpTo === null ? RANKS : RANKS.slice(RANKS.indexOf(keepUpTo) + 1)
  if (!above.length) return []
  const rows = await tx
    .update(apiTokens)
    .set({ revokedAt: kernel.clock.now() })
    .where(
      and(
        eq(apiTokens.spaceId, spaceId),
        eq(apiTokens.kind, 'space'),
        eq(apiTokens.createdBy, userId),
        isNull(apiTokens.revokedAt),
        inArray(apiTokens.role, [...above]),
      ),
    )
    .returning({ id: apiTokens.id })
  if (rows.length) {
    emit({
      type: 'space_token.revoked',
      spaceId,
      payload: { token_ids: rows.map((r) => r.id), reason: keepUpTo === null ? 'member_removed' : 'member_demoted' },
    })
  }
  return rows.map((r) => r.id)
}
