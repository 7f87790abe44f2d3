import { and, asc, eq } from 'drizzle-orm'
import { components } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import { blueprintErrors, unknownWhitelistErrors } from './blocks'
import { type ComponentView, StoryErrors } from './model'
import { type ComponentRow, orderedSchema, storiesUsingComponent } from './repo'

// Component blueprints: the schemas Story blocks are validated against on every save. Part of the stories module
// because a blueprint's only purpose is Story content, and deleting one must ask whether Stories still use it.

const view = (r: ComponentRow): ComponentView => ({
  name: r.name,
  display_name: r.displayName,
  is_root: r.isRoot,
  is_nestable: r.isNestable,
  schema: orderedSchema(r),
  created_at: r.createdAt.toISOString(),
  updated_at: r.updatedAt.toISOString(),
})

export interface ComponentInput {
  name?: string
  display_name?: string
  is_root?: boolean
  is_nestable?: boolean
  schema?: Record<string, unknown>
}

/**
 * The shape of the blueprint, then its blocks whitelists against the Space's blueprints (and its own name, for a
 * blueprint that nests itself): a typo in "Allowed components" is refused instead of silently allowing nothing.
 */
async function check(kernel: Kernel, spaceId: number, input: ComponentInput, ownName: string | undefined) {
  let errors = blueprintErrors(input)
  if (!Object.keys(errors).length && input.schema) {
    const rows = await kernel.db.db.select({ name: components.name }).from(components).where(eq(components.spaceId, spaceId))
    const known = new Set(rows.map((r) => r.name))
    if (ownName) known.add(ownName)
    errors = unknownWhitelistErrors(input.schema, known)
  }
  if (Object.keys(errors).length) throw validationFailed(errors, 'The component blueprint is not valid.')
}

async function find(kernel: Kernel, spaceId: number, name: string) {
  const [row] = await kernel.db.db
    .select()
    .from(components)
    .where(and(eq(components.spaceId, spaceId), eq(components.name, name)))
    .limit(1)
  if (!row) throw notFound('Component')
  return row
}

export async function listComponents(kernel: Kernel, access: SpaceAccess): Promise<ComponentView[]> {
  const rows = await kernel.db.db
    .select()
    .from(components)
    .where(eq(components.spaceId, access.space.id))
    .orderBy(asc(components.name))
  return rows.map(view)
}

export async function getComponent(kernel: Kernel, access: SpaceAccess, name: string): Promise<ComponentView> {
  return view(await find(kernel, access.space.id, name))
}

export async function createComponent(kernel: Kernel, access: SpaceAccess, input: ComponentInput & { name: string }): Promise<ComponentView> {
  await check(kernel, access.space.id, input, input.name)
  const now = kernel.clock.now()
  try {
    const [row] = await kernel.db.db
      .insert(components)
      .values({
        spaceId: access.space.id,
        name: input.name,
        displayName: input.display_name ?? input.name,
        isRoot: input.is_root ?? true,
        isNestable: input.is_nestable ?? true,
        schema: input.schema ?? {},
        fieldOrder: Object.keys(input.schema ?? {}),
        createdAt: now,
        updatedAt: now,
      })
      .returning()
    return view(row)
  } catch (err) {
    return uniqueAs('components_space_name_key', () => StoryErrors.componentExists(`A component named "${input.name}" already exists.`))(err)
  }
}

/** Changes the given properties; `schema`, when given, replaces the whole schema. Existing Stories are validated
 * against the new schema on their next save. */
export async function updateComponent(kernel: Kernel, access: SpaceAccess, name: string, input: ComponentInput): Promise<ComponentView> {
  if (input.name !== undefined && input.name !== name) {
    throw validationFailed({ name: ['cannot be changed; create a new component instead.'] })
  }
  const current = await find(kernel, access.space.id, name)
  await check(kernel, access.space.id, { schema: input.schema }, name)
  const [row] = await kernel.db.db
    .update(components)
    .set({
      displayName: input.display_name ?? current.displayName,
      isRoot: input.is_root ?? current.isRoot,
      isNestable: input.is_nestable ?? current.isNestable,
      schema: input.schema ?? current.schema,
      fieldOrder: input.schema ? Object.keys(input.schema) : current.fieldOrder,
      updatedAt: kernel.clock.now(),
    })
    .where(eq(components.id, current.id))
    .returning()
  return view(row)
}

/** What deleting the blueprint would touch: the Stories using it (the delete waits for 0) and the whitelists naming it. */
export async function componentUsage(kernel: Kernel, access: SpaceAccess, name: string): Promise<{ stories: number; allowed_in: string[] }> {
  await find(kernel, access.space.id, name)
  const [users, rows] = await Promise.all([
    storiesUsingComponent(kernel.db.db, access.space.id, name),
    kernel.db.db.select({ name: components.name, schema: components.schema }).from(components).where(eq(components.spaceId, access.space.id)).orderBy(asc(components.name)),
  ])
  const allowedIn = rows
    .filter((r) => Object.values((r.schema ?? {}) as Record<string, { component_whitelist?: unknown }>).some((f) => Array.isArray(f?.component_whitelist) && f.component_whitelist.includes(name)))
    .map((r) => r.name)
  return { stories: users, allowed_in: allowedIn }
}

export async function deleteComponent(kernel: Kernel, access: SpaceAccess, name: string): Promise<void> {
  const current = await find(kernel, access.space.id, name)
  const users = await storiesUsingComponent(kernel.db.db, access.space.id, name)
  if (users > 0) {
    throw StoryErrors.componentInUse(`The component "${name}" is used by ${users} ${users === 1 ? 'Story' : 'Stories'}.`)
  }
  await kernel.db.db.delete(components).where(eq(components.id, current.id))
}
