/**
 * The collection schema of a Space, derived from its component blueprints (`GET /v1/spaces/{space}/components`), with
 * the same rules as `content-service-cli types`: one object per blueprint discriminated by `component`, select options
 * as enums, blocks fields as the blueprints they admit (whitelist ∩ nestable), required fields required, assets and
 * links in the shape reads serve them, rich text as the stored document. Fields a blueprint does not list pass through.
 */
import { createHash } from 'node:crypto'
import { z } from 'astro/zod'

export interface FieldDef {
  type: string
  required?: boolean
  options?: string[]
  component_whitelist?: string[]
  [k: string]: unknown
}

export interface Blueprint {
  name: string
  is_root: boolean
  is_nestable: boolean
  schema: Record<string, FieldDef>
  [k: string]: unknown
}

const richNode: z.ZodType<unknown> = z.lazy(() =>
  z
    .object({
      type: z.string(),
      text: z.string().optional(),
      attrs: z.record(z.unknown()).optional(),
      marks: z.array(z.object({ type: z.string(), attrs: z.record(z.unknown()).optional() })).optional(),
      content: z.array(richNode).optional(),
    })
    .passthrough(),
)

export const assetSchema = z
  .object({
    uuid: z.string(),
    url: z.string().nullable(),
    transform_url: z.string().nullable(),
    alt: z.string().nullable(),
    width: z.number().nullable(),
    height: z.number().nullable(),
    mime: z.string().nullable().optional(),
    filename: z.string().nullable().optional(),
    missing: z.literal(true).optional(),
  })
  .passthrough()

export const linkSchema = z
  .object({
    url: z.string().optional(),
    story_uuid: z.string().optional(),
    full_path: z.string().nullable().optional(),
    name: z.string().nullable().optional(),
  })
  .passthrough()

const anyOf = (schemas: z.ZodTypeAny[]): z.ZodTypeAny => (schemas.length === 0 ? z.never() : schemas.length === 1 ? schemas[0] : z.union(schemas as [z.ZodTypeAny, z.ZodTypeAny, ...z.ZodTypeAny[]]))

/** One zod object per blueprint (name → schema); nested blocks resolve lazily, so recursive blueprints work. */
export function blockSchemas(blueprints: readonly Blueprint[]): Map<string, z.ZodTypeAny> {
  const out = new Map<string, z.ZodTypeAny>()
  const nestable = blueprints.filter((b) => b.is_nestable)
  const field = (def: FieldDef): z.ZodTypeAny => {
    switch (def.type) {
      case 'text':
      case 'textarea':
      case 'markdown':
      case 'datetime':
        return z.string()
      case 'richtext':
        return z.union([richNode, z.string()])
      case 'number':
        return z.number()
      case 'boolean':
        return z.boolean()
      case 'select':
        return def.options?.length ? z.enum(def.options as [string, ...string[]]) : z.string()
      case 'multiselect':
        return z.array(def.options?.length ? z.enum(def.options as [string, ...string[]]) : z.string())
      case 'tags':
        return z.array(z.string())
      case 'asset':
        return assetSchema
      case 'link':
        return linkSchema
      case 'blocks': {
        const allowed = nestable.filter((b) => !def.component_whitelist || def.component_whitelist.includes(b.name))
        return z.array(z.lazy(() => anyOf(allowed.map((b) => out.get(b.name)!))))
      }
      default:
        return z.unknown()
    }
  }
  for (const bp of blueprints) {
    const shape: Record<string, z.ZodTypeAny> = { component: z.literal(bp.name), _uid: z.string() }
    for (const [name, def] of Object.entries(bp.schema ?? {})) shape[name] = def.required ? field(def) : field(def).nullish()
    out.set(bp.name, z.object(shape).passthrough())
  }
  return out
}

/** The data of one entry: a published Story as the list read serves it, its blocks typed by the blueprints. */
export function storySchema(blueprints: readonly Blueprint[] | null) {
  let rootBlock: z.ZodTypeAny
  if (blueprints) {
    const blocks = blockSchemas(blueprints)
    rootBlock = anyOf(blueprints.filter((b) => b.is_root).map((b) => blocks.get(b.name)!))
  } else {
    rootBlock = z.object({ component: z.string(), _uid: z.string() }).passthrough()
  }
  return z.object({
    uuid: z.string(),
    id: z.number().optional(),
    name: z.string(),
    slug: z.string(),
    full_path: z.string(),
    /** The locale this entry was read for (the collection key's first part). */
    locale: z.string(),
    /** The locale served (another one when the Story has no translation: the Space's fallback chain). */
    lang: z.string(),
    version_no: z.number().optional(),
    published_at: z.string().nullable().optional(),
    first_published_at: z.string().nullable().optional(),
    content: z.object({ type: z.literal('doc'), blocks: z.array(rootBlock) }).passthrough(),
  })
}

/** A stable digest of the blueprints (order-independent): a change forces a full reload. */
export function blueprintsKey(blueprints: readonly Blueprint[] | null): string {
  if (!blueprints) return 'none'
  const norm = [...blueprints]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((b) => [b.name, b.is_root, b.is_nestable, b.schema])
  return createHash('sha256').update(JSON.stringify(norm)).digest('hex').slice(0, 32)
}
