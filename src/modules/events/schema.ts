import { tzlib_get_timezones } from 'timezones-ical-library'
import { parseIsoDateTime } from '../../kernel/dates'
import { compileJsonSchema, type ErrorObject, fieldErrors as ajvFieldErrors, type ValidateFunction } from '../../kernel/json-schema'

/**
 * The event's `fields`: a JSON Schema (draft 2020-12) for the extra registration values, compiled by the kernel's
 * Ajv (`kernel/json-schema.ts`) like form schemas. Validators are kept per (event id, sequence): a change of the
 * event recompiles.
 */
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
  return compileJsonSchema(schema)
}

/** Ajv errors → messages keyed by the top-level property (`fields/<key>`), as form submissions report them. */
export function fieldErrors(errors: ErrorObject[] | null | undefined): Record<string, string[]> {
  return ajvFieldErrors(errors, { prefix: 'fields/', root: 'fields' })
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
