import { parseIsoDateTime } from '../../kernel/dates'
import { compileJsonSchema, type ErrorObject, fieldErrors as ajvFieldErrors, type ValidateFunction } from '../../kernel/json-schema'
import { type FieldType, type FormFieldDef, VALUE_LIMIT } from './model'

/**
 * A form's `fields` → JSON Schema (draft 2020-12), compiled by the kernel's Ajv (`kernel/json-schema.ts`). The schema
 * describes the submitted values after coercion (numbers, booleans, strings): `data` is first normalised
 * (`normalizeData`), then validated, then consent values are stored as `{accepted, text}`.
 */

export type JsonSchema = Record<string, unknown>

function fieldSchema(f: FormFieldDef): JsonSchema {
  const max = Math.min(f.max_length ?? VALUE_LIMIT, VALUE_LIMIT)
  switch (f.type) {
    case 'number':
      return { type: 'number', title: f.label }
    case 'checkbox':
    case 'consent':
      return f.required ? { type: 'boolean', const: true, title: f.label } : { type: 'boolean', title: f.label }
    case 'select':
    case 'radio':
      return { type: 'string', enum: f.options ?? [], title: f.label }
    case 'email':
      return { type: 'string', format: 'email', maxLength: Math.min(max, 254), title: f.label }
    case 'file':
      return { type: 'string', maxLength: VALUE_LIMIT, title: f.label }
    default:
      return { type: 'string', minLength: f.required ? 1 : 0, maxLength: max, title: f.label }
  }
}

export function compileSchema(fields: FormFieldDef[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const f of fields) properties[f.key] = fieldSchema(f)
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties,
    required: fields.filter((f) => f.required).map((f) => f.key),
    additionalProperties: false,
  }
}

/** Compiled validators by the loaded schema object (each load of a form row brings a new one: a save recompiles). */
export class Validators {
  private bySchema = new WeakMap<object, ValidateFunction>()

  get(schema: JsonSchema): ValidateFunction {
    let fn = this.bySchema.get(schema)
    if (!fn) {
      fn = compileJsonSchema(schema)
      this.bySchema.set(schema, fn)
    }
    return fn
  }
}

/** Checks that a compiled schema is one Ajv accepts (every save). */
export function assertCompiles(schema: JsonSchema) {
  compileJsonSchema(schema)
}

function message(e: ErrorObject): string {
  switch (e.keyword) {
    case 'required':
      return 'is required'
    case 'format':
      return 'must be an e-mail address'
    case 'enum':
      return 'must be one of the options'
    case 'const':
      return 'must be checked'
    case 'maxLength':
      return `must be at most ${(e.params as { limit: number }).limit} characters`
    case 'minLength':
      return 'is required'
    case 'type':
      return `must be a ${(e.params as { type: string }).type === 'boolean' ? 'boolean (checked or not)' : (e.params as { type: string }).type}`
    default:
      return e.message ?? 'is not valid'
  }
}

/** Ajv errors as `{<field key>: [messages]}` (the shared 422 shape). */
export function fieldErrors(errors: ErrorObject[] | null | undefined): Record<string, string[]> {
  return ajvFieldErrors(errors, { root: 'data', message })
}

// ---- normalisation ----

const TAG_RE = /<\/?[A-Za-z][^<>]*>|<!--[\s\S]*?-->/g
const TRUE = new Set(['true', '1', 'on', 'yes', 'checked'])
const FALSE = new Set(['false', '0', 'off', 'no', ''])

/** Cuts at `max` UTF-16 units without leaving half a surrogate pair. */
function cut(s: string, max = VALUE_LIMIT): string {
  if (s.length <= max) return s
  let end = max
  const c = s.charCodeAt(end - 1)
  if (c >= 0xd800 && c <= 0xdbff) end--
  return s.slice(0, end)
}

export interface Normalized {
  data: Record<string, unknown>
  /** Markup tags were removed from some value (a spam signal). */
  stripped: boolean
}

function toText(v: unknown): unknown {
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean')) return v.join(', ')
  return v // left for validation to refuse
}

/**
 * Keeps the form's own keys only (unknown keys are dropped), coerces values to scalars — number fields to numbers,
 * checkbox and consent to booleans, the rest to strings — strips markup tags, trims and cuts strings at 5000
 * characters. Empty values count as absent.
 */
export function normalizeData(fields: FormFieldDef[], raw: Record<string, unknown>): Normalized {
  const data: Record<string, unknown> = {}
  let stripped = false
  for (const f of fields) {
    if (!Object.hasOwn(raw, f.key)) continue
    let v = raw[f.key]
    if (v === null || v === undefined) continue
    const type: FieldType = f.type
    if (type === 'checkbox' || type === 'consent') {
      if (typeof v === 'number') v = v !== 0
      else if (typeof v === 'string') {
        const s = v.trim().toLowerCase()
        if (TRUE.has(s)) v = true
        else if (FALSE.has(s)) v = false
      }
      data[f.key] = v
      continue
    }
    if (type === 'number') {
      if (typeof v === 'string') {
        const s = v.trim()
        if (s === '') continue
        if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) && Number.isFinite(Number(s))) v = Number(s)
      }
      data[f.key] = v
      continue
    }
    v = toText(v)
    if (typeof v === 'string') {
      const clean = v.replace(TAG_RE, '')
      if (clean !== v) stripped = true
      v = cut(clean.trim())
      if (v === '') continue
    }
    data[f.key] = v
  }
  return { data, stripped }
}

/** What is stored: consent values become `{accepted, text}` with the label the visitor saw. */
export function storedData(fields: FormFieldDef[], data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of fields) {
    if (!Object.hasOwn(data, f.key)) continue
    out[f.key] = f.type === 'consent' ? { accepted: data[f.key] === true, text: f.label } : data[f.key]
  }
  return out
}

// ---- spam score ----

const LINK_RE = /\b(?:https?:\/\/|www\.)/gi
const REPEAT_RE = /(.)\1{7,}/su

/**
 * Heuristic spam score, 0–1 (≥ 0.8: spam). Signals, added up and capped at 1:
 * - links in the values: 1 → 0.2, 2 → 0.4, 3 or more → 0.6
 * - markup tags that were stripped: 0.4
 * - a character repeated 8 or more times in a row: 0.3
 * - submitted less than 2 s after the form's `rendered_at`: 0.5
 */
export function spamScore(n: Normalized, rawValues: Record<string, unknown>, renderedAt: Date | null, now: Date): number {
  let links = 0
  let repeated = false
  for (const v of Object.values(n.data)) {
    if (typeof v !== 'string') continue
    links += v.match(LINK_RE)?.length ?? 0
    if (!repeated && REPEAT_RE.test(v)) repeated = true
  }
  // Links inside stripped markup (<a href="...">) count too.
  for (const v of Object.values(rawValues)) if (typeof v === 'string' && /<a\s[^>]*href/i.test(v)) links++
  let score = Math.min(links, 3) * 0.2
  if (n.stripped) score += 0.4
  if (repeated) score += 0.3
  if (renderedAt) {
    const ms = now.getTime() - renderedAt.getTime()
    if (ms >= 0 && ms < 2000) score += 0.5
  }
  return Math.round(Math.min(1, score) * 100) / 100
}

export const SPAM_THRESHOLD = 0.8

/** `rendered_at` as ISO 8601 or epoch milliseconds; null when absent or unreadable. */
export function parseRenderedAt(v: unknown): Date | null {
  if (typeof v === 'number' && Number.isFinite(v)) return new Date(v)
  if (typeof v === 'string' && v.trim()) {
    const s = v.trim()
    // Strictly: an impossible date (`2026-02-30`) is unreadable, not rolled over.
    const d = /^\d{10,16}$/.test(s) ? new Date(Number(s)) : (parseIsoDateTime(s)?.date ?? new Date(Number.NaN))
    return Number.isNaN(d.getTime()) ? null : d
  }
  return null
}
