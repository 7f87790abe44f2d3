import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { tzlib_get_timezones } from 'timezones-ical-library'
import { parseIsoDateTime } from '../../kernel/dates'

/**
 * The event's `fields`: a JSON Schema (draft 2020-12) for the extra registration values, compiled with Ajv (+
 * ajv-formats) like form schemas. Validators are kept per (event id, sequence): a change of the event recompiles.
 */
const ajv = new Ajv2020({ allErrors: true, strict: false })
addFormats(ajv)

const MAX_VALIDATORS = 1000

export class FieldValidators {
  private byKey = new Map<string, ValidateFunction>()

  get(key: string, schema: Record<string, unknown>): ValidateFunction {
    let fn = this.byKey.get(key)
    if (!fn) {
      fn = compileFields(schema)
      if (this.byKey.size >= MAX_VALIDATORS) this.byKey.delete(this.byKey.keys().next().value as string)
      this.byKey.set(key, fn)
    }
    return fn
  }
}

/** Compiles a fields schema; throws an Error with Ajv's message when it is not a valid schema. */
export function compileFields(schema: Record<string, unknown>): ValidateFunction {
  const fn = ajv.compile(schema)
  // Ajv keeps every compiled schema in its own cache; the function is ours to keep, the entry is not.
  ajv.removeSchema(schema)
  return fn
}

/** Ajv errors → messages keyed by the top-level property (`fields/<key>`), as form submissions report them. */
export function fieldErrors(errors: ErrorObject[] | null | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const e of errors ?? []) {
    const prop = e.keyword === 'required' ? (e.params as { missingProperty: string }).missingProperty : e.instancePath.split('/')[1]
    const key = prop ? `fields/${prop}` : 'fields'
    const m = e.keyword === 'required' ? 'is required' : (e.message ?? 'is not valid')
    const list = (out[key] ??= [])
    if (!list.includes(m)) list.push(m)
  }
  return out
}

let zones: Set<string> | null = null

/** An IANA name the platform knows and for which a VTIMEZONE can be written. */
export function isTimeZone(name: string): boolean {
  zones ??= new Set(tzlib_get_timezones() as string[])
  if (!zones.has(name)) return false
  try {
    new Intl.DateTimeFormat('en', { timeZone: name })
    return true
  } catch {
    return false
  }
}

const INSTANT_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/

/**
 * An ISO 8601 instant with Z or an offset; null otherwise (a time without an offset is ambiguous) — and null for an
 * impossible one (`2026-02-30T10:00Z`, `T24:00`): the kernel's strict parser, never JavaScript's roll-over.
 */
export function parseInstant(s: string): Date | null {
  if (!INSTANT_RE.test(s)) return null
  const d = parseIsoDateTime(s)?.date
  return !d || Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1970 || d.getUTCFullYear() > 9999 ? null : d
}

/** A `YYYY-MM-DD` date (UTC midnight) or an instant; null otherwise. */
export function parseDateOrInstant(s: string): Date | null {
  if (DATE_RE.test(s)) return parseIsoDateTime(s)?.date ?? null
  return parseInstant(s)
}
