/**
 * @content-service/sdk/validate — checks a Story's content against a Space's blueprints at run time, with the server's
 * rules (unknown components and fields, root and nestable, whitelists, required fields, field types, select options,
 * nesting depth). Content written before a blueprint changed may not match its generated type: this says where.
 * Errors are keyed by block path, as the server's 422 answers: `blocks/0/headline`.
 */

export type FieldType =
  | 'text'
  | 'textarea'
  | 'richtext'
  | 'markdown'
  | 'number'
  | 'boolean'
  | 'datetime'
  | 'select'
  | 'multiselect'
  | 'tags'
  | 'asset'
  | 'link'
  | 'blocks'

export interface FieldDef {
  type: FieldType
  required?: boolean
  translatable?: boolean
  max_length?: number
  options?: string[]
  component_whitelist?: string[]
}

export interface Blueprint {
  name: string
  is_root: boolean
  is_nestable: boolean
  schema: Record<string, FieldDef>
}

export type ContentErrors = Record<string, string[]>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const empty = (v: unknown) => v == null || v === '' || (Array.isArray(v) && !v.length)

/** The errors of `content` against `blueprints` (empty: it matches). */
export function contentErrors(content: unknown, blueprints: readonly Blueprint[] | Record<string, Blueprint>): ContentErrors {
  const all: readonly Blueprint[] = Array.isArray(blueprints) ? (blueprints as readonly Blueprint[]) : Object.values(blueprints as Record<string, Blueprint>)
  const bps = new Map(all.map((b) => [b.name, b]))
  const errors: ContentErrors = {}
  const add = (k: string, m: string) => (errors[k] ??= []).push(m)
  const list = (items: unknown[], at: string, level: number, whitelist?: string[]) => {
    if (level > 8) return add(at, 'blocks nest at most 8 levels deep')
    items.forEach((b, i) => {
      const p = `${at}/${i}`
      if (!isObj(b)) return add(p, 'must be a block object {component, _uid, ...fields}')
      if (typeof b._uid !== 'string' || !b._uid) add(`${p}/_uid`, 'must be a string')
      const bp = typeof b.component === 'string' ? bps.get(b.component) : undefined
      if (!bp) return add(`${p}/component`, `unknown component "${String(b.component)}"`)
      if (level === 1 && !bp.is_root) add(`${p}/component`, `"${bp.name}" is not allowed at the top level`)
      if (level > 1 && !bp.is_nestable) add(`${p}/component`, `"${bp.name}" cannot be nested`)
      if (whitelist && !whitelist.includes(bp.name)) add(`${p}/component`, `"${bp.name}" is not allowed here`)
      for (const k of Object.keys(b)) if (k !== 'component' && k !== '_uid' && !(k in bp.schema)) add(`${p}/${k}`, 'is not a field of this component')
      for (const [f, def] of Object.entries(bp.schema)) field(b[f], def, `${p}/${f}`, level)
    })
  }
  const field = (v: unknown, d: FieldDef, at: string, level: number) => {
    if (empty(v)) return d.required ? add(at, 'is required') : undefined
    const str = typeof v === 'string'
    switch (d.type) {
      case 'text':
      case 'textarea':
      case 'markdown':
      case 'richtext':
        if (d.type === 'richtext' && isObj(v)) return v.type === 'doc' && Array.isArray(v.content) ? undefined : add(at, 'must be a rich-text tree')
        if (!str) return add(at, 'must be a string')
        if (d.max_length && (v as string).length > d.max_length) add(at, `must be at most ${d.max_length} characters`)
        return
      case 'number':
        return typeof v === 'number' && Number.isFinite(v) ? undefined : add(at, 'must be a number')
      case 'boolean':
        return typeof v === 'boolean' ? undefined : add(at, 'must be true or false')
      case 'datetime':
        return str && DATE.test(v as string) && !Number.isNaN(Date.parse(v as string)) ? undefined : add(at, 'must be an ISO 8601 date or date-time')
      case 'select':
        return str && (!d.options || d.options.includes(v as string)) ? undefined : add(at, `must be one of ${d.options?.join(', ')}`)
      case 'multiselect':
        return Array.isArray(v) && v.every((x) => typeof x === 'string' && (!d.options || d.options.includes(x))) ? undefined : add(at, `must be a list of ${d.options?.join(', ')}`)
      case 'tags':
        return Array.isArray(v) && v.every((x) => typeof x === 'string') ? undefined : add(at, 'must be a list of strings')
      case 'asset':
        return isObj(v) && typeof v.uuid === 'string' && UUID.test(v.uuid) ? undefined : add(at, 'must be an asset {uuid, ...}')
      case 'link':
        return isObj(v) && (typeof v.url === 'string' || (typeof v.story_uuid === 'string' && UUID.test(v.story_uuid))) ? undefined : add(at, 'must be a link {url} or {story_uuid}')
      case 'blocks':
        return Array.isArray(v) ? list(v, at, level + 1, d.component_whitelist) : add(at, 'must be a list of blocks')
    }
  }
  if (!isObj(content) || content.type !== 'doc' || !Array.isArray(content.blocks)) add('content', "must be {type: 'doc', blocks: [...]}")
  else list(content.blocks, 'blocks', 1)
  return errors
}

/** A validator bound to a Space's blueprints: `isValid(content)` narrows to the generated type. */
export function createValidator<T = unknown>(blueprints: readonly Blueprint[] | Record<string, Blueprint>) {
  return {
    errors: (content: unknown) => contentErrors(content, blueprints),
    isValid: (content: unknown): content is T => Object.keys(contentErrors(content, blueprints)).length === 0,
  }
}
