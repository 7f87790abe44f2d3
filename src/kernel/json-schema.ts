import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020'
import addFormats from 'ajv-formats'

export type { ErrorObject, ValidateFunction }

/**
 * The one Ajv of the modules' user-defined JSON Schemas (draft 2020-12, every error reported, ajv-formats): a form's
 * fields, an event's registration fields. Modules keep the compiled functions (per schema object, per row version);
 * Ajv's own cache does not keep them.
 */
const ajv = new Ajv2020({ allErrors: true, strict: false })
addFormats(ajv)

/** Compiles a schema; throws an Error with Ajv's message when it is not a valid schema. */
export function compileJsonSchema(schema: Record<string, unknown>): ValidateFunction {
  const fn = ajv.compile(schema)
  // Ajv keeps every compiled schema in its own cache; the function is ours to keep, the entry is not.
  ajv.removeSchema(schema)
  return fn
}

export interface FieldErrorsOptions {
  /** Put before the top-level property in a key (`fields/`: `fields/<key>`); none by default. */
  prefix?: string
  /** The key of an error about the value as a whole (no property). */
  root: string
  /** The message of one error; default: `is required` for a missing property, else Ajv's message. */
  message?: (e: ErrorObject) => string
}

const defaultMessage = (e: ErrorObject) => (e.keyword === 'required' ? 'is required' : (e.message ?? 'is not valid'))

/** Ajv errors → messages keyed by the top-level property they concern (the shared 422 shape's `errors`), each once. */
export function fieldErrors(errors: ErrorObject[] | null | undefined, opts: FieldErrorsOptions): Record<string, string[]> {
  const message = opts.message ?? defaultMessage
  const out: Record<string, string[]> = {}
  for (const e of errors ?? []) {
    const prop = e.keyword === 'required' ? (e.params as { missingProperty: string }).missingProperty : e.instancePath.split('/')[1]
    const key = prop ? `${opts.prefix ?? ''}${prop}` : opts.root
    const m = message(e)
    const list = (out[key] ??= [])
    if (!list.includes(m)) list.push(m)
  }
  return out
}
