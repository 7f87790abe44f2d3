// Story documents and component blueprints: the shapes, and validation of one against the other. Pure functions; the
// services load blueprints and call these.

import { parseIsoDateTime } from '../../kernel/dates'

export const FIELD_TYPES = [
  'text',
  'textarea',
  'richtext',
  'markdown',
  'number',
  'boolean',
  'datetime',
  'select',
  'multiselect',
  'tags',
  'asset',
  'link',
  'blocks',
] as const
export type FieldType = (typeof FIELD_TYPES)[number]

export interface FieldDef {
  type: FieldType
  required?: boolean
  /** false: a translation shows the Story's own-locale value of this field (matched by block `_uid`). */
  translatable?: boolean
  max_length?: number
  options?: string[]
  component_whitelist?: string[]
  /** What editors see instead of the field's key, per locale code (the admin shows its UI language's, else any). */
  label?: Record<string, string>
  /** A hint shown under the field in the editor, per locale code. */
  help?: Record<string, string>
}

export interface Blueprint {
  name: string
  display_name: string
  is_root: boolean
  is_nestable: boolean
  schema: Record<string, FieldDef>
}

export interface Block {
  component: string
  _uid: string
  [field: string]: unknown
}

export interface Doc {
  type: 'doc'
  blocks: Block[]
}

/** Nesting cap for blocks inside `blocks` fields: content.blocks is level 1. */
export const MAX_BLOCK_DEPTH = 8
/** Blocks in one document, nested ones included. */
export const MAX_BLOCKS = 2000
export const BLUEPRINT_NAME = /^[a-z][a-z0-9_-]{0,63}$/
const FIELD_NAME = /^[a-z][a-z0-9_]{0,63}$/
const UID = /^[A-Za-z0-9_-]{1,64}$/
const MAX_OPTIONS = 500
const MAX_TAGS = 100
const LOCALE_KEY = /^[a-zA-Z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,4}$/
/** The longest field label and help text, in characters, and the most locales one field may carry texts for. */
export const MAX_LABEL = 120
export const MAX_HELP = 1000
const MAX_TEXT_LOCALES = 50
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/

type Errors = Record<string, string[]>
const add = (errors: Errors, key: string, msg: string) => {
  if (!Object.hasOwn(errors, key)) errors[key] = []
  errors[key].push(msg)
}
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** Checks a blueprint definition (its `schema` especially); returns errors keyed like `schema/<field>/<prop>`. */
export function blueprintErrors(input: { name?: string; schema?: unknown }): Errors {
  const errors: Errors = {}
  if (input.name !== undefined && !BLUEPRINT_NAME.test(input.name)) {
    add(errors, 'name', 'must match ^[a-z][a-z0-9_-]*$ (at most 64 characters)')
  }
  if (input.schema === undefined) return errors
  if (!isPlainObject(input.schema)) {
    add(errors, 'schema', 'must be an object of field name to field definition')
    return errors
  }
  const entries = Object.entries(input.schema)
  if (entries.length > 200) add(errors, 'schema', 'has more than 200 fields')
  for (const [field, def] of entries) {
    const at = `schema/${field}`
    if (!FIELD_NAME.test(field)) {
      add(errors, at, 'field names match ^[a-z][a-z0-9_]*$ (component and _uid are reserved)')
      continue
    }
    if (!isPlainObject(def)) {
      add(errors, at, 'must be an object with a type')
      continue
    }
    const known = new Set(['type', 'required', 'translatable', 'max_length', 'options', 'component_whitelist', 'label', 'help'])
    for (const k of Object.keys(def)) if (!known.has(k)) add(errors, `${at}/${k}`, 'is not a known field property')
    const type = def.type
    if (!(FIELD_TYPES as readonly unknown[]).includes(type)) {
      add(errors, `${at}/type`, `must be one of ${FIELD_TYPES.join(', ')}`)
      continue
    }
    if (def.required !== undefined && typeof def.required !== 'boolean') add(errors, `${at}/required`, 'must be a boolean')
    if (def.translatable !== undefined && typeof def.translatable !== 'boolean') {
      add(errors, `${at}/translatable`, 'must be a boolean')
    }
    if (def.max_length !== undefined) {
      if (!['text', 'textarea', 'richtext', 'markdown'].includes(type as string)) {
        add(errors, `${at}/max_length`, 'applies to text, textarea, richtext and markdown fields only')
      } else if (!Number.isInteger(def.max_length) || (def.max_length as number) < 1) {
        add(errors, `${at}/max_length`, 'must be a positive integer')
      }
    }
    if (def.options !== undefined) {
      if (type !== 'select' && type !== 'multiselect') {
        add(errors, `${at}/options`, 'applies to select and multiselect fields only')
      } else if (
        !Array.isArray(def.options) ||
        def.options.length === 0 ||
        def.options.length > MAX_OPTIONS ||
        !def.options.every((o) => typeof o === 'string' && o.length > 0 && o.length <= 200)
      ) {
        add(errors, `${at}/options`, `must be a list of 1 to ${MAX_OPTIONS} non-empty strings`)
      }
    } else if (type === 'select' || type === 'multiselect') {
      add(errors, `${at}/options`, 'is required for select and multiselect fields')
    }
    if (def.component_whitelist !== undefined) {
      if (type !== 'blocks') add(errors, `${at}/component_whitelist`, 'applies to blocks fields only')
      else if (!Array.isArray(def.component_whitelist) || !def.component_whitelist.every((c) => typeof c === 'string' && BLUEPRINT_NAME.test(c))) {
        add(errors, `${at}/component_whitelist`, 'must be a list of component names')
      }
    }
    localeTextErrors(errors, `${at}/label`, def.label, MAX_LABEL)
    localeTextErrors(errors, `${at}/help`, def.help, MAX_HELP)
  }
  return errors
}

/** `label` and `help`: an object of locale code to a non-empty text of at most `max` characters. */
function localeTextErrors(errors: Errors, at: string, value: unknown, max: number) {
  if (value === undefined) return
  if (!isPlainObject(value)) {
    add(errors, at, 'must be an object of locale code to text, e.g. {"en": "Headline"}')
    return
  }
  const entries = Object.entries(value)
  if (entries.length > MAX_TEXT_LOCALES) add(errors, at, `has texts for more than ${MAX_TEXT_LOCALES} locales`)
  for (const [lang, text] of entries) {
    if (!LOCALE_KEY.test(lang)) add(errors, `${at}/${lang}`, 'is not a locale code (BCP-47, e.g. en or de-CH)')
    else if (typeof text !== 'string' || text.trim().length === 0 || text.length > max) {
      add(errors, `${at}/${lang}`, `must be a text of 1 to ${max} characters`)
    }
  }
}

/** The whitelist names of a schema that are not blueprints of the Space (`known`), keyed `schema/<field>/component_whitelist`. */
export function unknownWhitelistErrors(schema: Record<string, unknown> | undefined, known: Set<string>): Errors {
  const errors: Errors = {}
  for (const [field, def] of Object.entries(schema ?? {})) {
    const list = isPlainObject(def) && Array.isArray(def.component_whitelist) ? def.component_whitelist : []
    const missing = list.filter((c): c is string => typeof c === 'string' && !known.has(c))
    if (missing.length) {
      add(errors, `schema/${field}/component_whitelist`, `names no component of this Space: ${missing.map((m) => `"${m}"`).join(', ')}`)
    }
  }
  return errors
}

/**
 * Validates a Story document against the Space's blueprints. Errors are keyed by block_path
 * (`blocks/2/headline`, `blocks/0/body/1/title`), `content` for the document itself.
 */
export function contentErrors(content: unknown, blueprints: Map<string, Blueprint>): Errors {
  const errors: Errors = {}
  if (!isPlainObject(content) || content.type !== 'doc' || !Array.isArray(content.blocks)) {
    add(errors, 'content', "must be {type: 'doc', blocks: [...]}")
    return errors
  }
  for (const k of Object.keys(content)) if (k !== 'type' && k !== 'blocks') add(errors, `content/${k}`, 'is not allowed')
  const state = { count: 0, uids: new Set<string>() }
  validateBlockList(content.blocks, 'blocks', 1, undefined, blueprints, errors, state)
  return errors
}

function validateBlockList(
  list: unknown[],
  at: string,
  level: number,
  whitelist: string[] | undefined,
  blueprints: Map<string, Blueprint>,
  errors: Errors,
  state: { count: number; uids: Set<string> },
) {
  if (level > MAX_BLOCK_DEPTH) {
    add(errors, at, `blocks nest at most ${MAX_BLOCK_DEPTH} levels deep`)
    return
  }
  for (let i = 0; i < list.length; i++) {
    const path = `${at}/${i}`
    if (++state.count > MAX_BLOCKS) {
      add(errors, path, `a document holds at most ${MAX_BLOCKS} blocks`)
      return
    }
    const block = list[i]
    if (!isPlainObject(block)) {
      add(errors, path, 'must be a block object {component, _uid, ...fields}')
      continue
    }
    if (typeof block._uid !== 'string' || !UID.test(block._uid)) {
      add(errors, `${path}/_uid`, 'must be 1 to 64 characters of A-Z a-z 0-9 _ -')
    } else if (state.uids.has(block._uid)) {
      add(errors, `${path}/_uid`, 'must be unique within the document')
    } else {
      state.uids.add(block._uid)
    }
    if (typeof block.component !== 'string') {
      add(errors, `${path}/component`, 'must name a component blueprint')
      continue
    }
    const bp = blueprints.get(block.component)
    if (!bp) {
      add(errors, `${path}/component`, `unknown component "${block.component}"`)
      continue
    }
    if (level === 1 && !bp.is_root) add(errors, `${path}/component`, `"${bp.name}" is not allowed at the top level (is_root is false)`)
    if (level > 1 && !bp.is_nestable) add(errors, `${path}/component`, `"${bp.name}" cannot be nested (is_nestable is false)`)
    if (whitelist && !whitelist.includes(bp.name)) add(errors, `${path}/component`, `"${bp.name}" is not allowed here`)
    for (const key of Object.keys(block)) {
      if (key !== 'component' && key !== '_uid' && !Object.hasOwn(bp.schema, key)) add(errors, `${path}/${key}`, 'is not a field of this component')
    }
    for (const [field, def] of Object.entries(bp.schema)) {
      validateField(block[field], def, `${path}/${field}`, level, blueprints, errors, state)
    }
  }
}

function isEmpty(v: unknown) {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)
}

function validateField(
  value: unknown,
  def: FieldDef,
  at: string,
  level: number,
  blueprints: Map<string, Blueprint>,
  errors: Errors,
  state: { count: number; uids: Set<string> },
) {
  if (isEmpty(value)) {
    if (def.required) add(errors, at, 'is required')
    return
  }
  switch (def.type) {
    case 'text':
    case 'textarea':
    case 'markdown':
      if (typeof value !== 'string') return add(errors, at, 'must be a string')
      if (def.max_length && value.length > def.max_length) add(errors, at, `must be at most ${def.max_length} characters`)
      return
    case 'richtext':
      // Either markup text or a rich-text tree ({type: 'doc', content: [...]}); max_length counts the text form only.
      if (typeof value === 'string') {
        if (def.max_length && value.length > def.max_length) add(errors, at, `must be at most ${def.max_length} characters`)
        return
      }
      if (!isPlainObject(value) || value.type !== 'doc' || !Array.isArray(value.content)) {
        add(errors, at, "must be a string or a rich-text tree {type: 'doc', content: [...]}")
      }
      return
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) add(errors, at, 'must be a number')
      return
    case 'boolean':
      if (typeof value !== 'boolean') add(errors, at, 'must be true or false')
      return
    case 'datetime':
      if (typeof value !== 'string' || !ISO_DATETIME.test(value) || parseIsoDateTime(value) === null) {
        add(errors, at, 'must be an ISO 8601 date or date-time')
      }
      return
    case 'select':
      if (typeof value !== 'string') return add(errors, at, 'must be a string')
      if (def.options && !def.options.includes(value)) add(errors, at, `must be one of ${def.options.join(', ')}`)
      return
    case 'multiselect':
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) return add(errors, at, 'must be a list of strings')
      for (const v of value) if (def.options && !def.options.includes(v as string)) add(errors, at, `"${v}" is not one of ${def.options.join(', ')}`)
      return
    case 'tags':
      if (!Array.isArray(value) || value.length > MAX_TAGS || !value.every((v) => typeof v === 'string' && v.length > 0 && v.length <= 100)) {
        add(errors, at, `must be a list of at most ${MAX_TAGS} tags of 1 to 100 characters`)
      }
      return
    case 'asset':
      if (!isPlainObject(value) || typeof value.uuid !== 'string' || !UUID.test(value.uuid)) {
        add(errors, at, 'must be an asset reference {uuid, ...}')
      }
      return
    case 'link':
      if (!isPlainObject(value)) return add(errors, at, 'must be a link {url} or {story_uuid}')
      if (typeof value.url === 'string') {
        if (!/^(https?:\/\/|mailto:|tel:|\/|#)/i.test(value.url)) add(errors, `${at}/url`, 'must be an http(s), mailto: or tel: URL, a path or an anchor')
      } else if (typeof value.story_uuid === 'string') {
        if (!UUID.test(value.story_uuid)) add(errors, `${at}/story_uuid`, 'must be a uuid')
      } else {
        add(errors, at, 'must be a link {url} or {story_uuid}')
      }
      return
    case 'blocks':
      if (!Array.isArray(value)) return add(errors, at, 'must be a list of blocks')
      validateBlockList(value, at, level + 1, def.component_whitelist, blueprints, errors, state)
      return
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Every component name a document uses, nested blocks included. */
export function componentsUsed(content: Doc, into = new Set<string>()): Set<string> {
  const walk = (list: unknown[]) => {
    for (const b of list) {
      if (!isPlainObject(b)) continue
      if (typeof b.component === 'string') into.add(b.component)
      for (const v of Object.values(b)) if (Array.isArray(v) && v.some((x) => isPlainObject(x) && 'component' in x)) walk(v)
    }
  }
  walk(content.blocks)
  return into
}

/**
 * A translation as the public sees it: fields marked `translatable: false` take the Story's own-locale value from the
 * block with the same `_uid`, so editors cannot let such fields drift between locales.
 */
export function applyUntranslatable(translation: Doc, source: Doc, blueprints: Map<string, Blueprint>): Doc {
  const byUid = new Map<string, Block>()
  const index = (list: unknown[]) => {
    for (const b of list) {
      if (!isPlainObject(b)) continue
      if (typeof b._uid === 'string') byUid.set(b._uid, b as Block)
      for (const v of Object.values(b)) if (Array.isArray(v)) index(v)
    }
  }
  index(source.blocks)
  const fixed = (list: unknown[]): unknown[] =>
    list.map((b) => {
      if (!isPlainObject(b) || typeof b.component !== 'string') return b
      const bp = blueprints.get(b.component)
      const src = typeof b._uid === 'string' ? byUid.get(b._uid) : undefined
      const out: Record<string, unknown> = { ...b }
      if (bp) {
        for (const [field, def] of Object.entries(bp.schema)) {
          if (def.type === 'blocks' && Array.isArray(out[field])) out[field] = fixed(out[field] as unknown[])
          else if (def.translatable === false && src && src.component === b.component && field in src) out[field] = src[field]
        }
      }
      return out
    })
  return { type: 'doc', blocks: fixed(translation.blocks) as Block[] }
}

/** The first text headline of a document (for the OG card): a `headline` or `title` field, breadth first. */
export function headlineOf(content: Doc): string | null {
  const queue: unknown[] = [...content.blocks]
  while (queue.length) {
    const b = queue.shift()
    if (!isPlainObject(b)) continue
    for (const key of ['headline', 'title']) {
      const v = b[key]
      if (typeof v === 'string' && v.trim()) return v.trim()
    }
    for (const v of Object.values(b)) if (Array.isArray(v)) queue.push(...v)
  }
  return null
}
