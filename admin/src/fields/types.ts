/** One field of a component blueprint, as the API describes it (GET /v1/spaces/{space}/components). */
export interface FieldDef {
  type: string
  required?: boolean
  translatable?: boolean
  max_length?: number
  options?: string[]
  component_whitelist?: string[]
  /** Locale code → what editors see instead of the key. */
  label?: Record<string, string>
  /** Locale code → a hint under the field. */
  help?: Record<string, string>
}

export interface Blueprint {
  name: string
  display_name: string
  is_root: boolean
  is_nestable: boolean
  schema: Record<string, FieldDef>
}

/** A block of the Story document: `{component, _uid, ...fields}`. */
export type Block = { component: string; _uid: string } & Record<string, unknown>

/** What every field editor gets. */
export interface FieldProps<V = unknown> {
  /** The input's id (its <label> points at it). */
  id: string
  /** The API's error path of this field (`blocks/2/headline`): 422 errors are keyed by it. */
  path: string
  name: string
  def: FieldDef
  value: V | undefined
  onChange: (value: V | undefined) => void
  /** aria-describedby for the field's errors, when it has some. */
  describedBy?: string
  invalid: boolean
  /** Every blueprint of the Space (the blocks field lists what can be added). */
  blueprints: Map<string, Blueprint>
  /** Error messages by path, for fields that render nested fields (blocks). */
  errors: Record<string, string[]>
}

/** An editor for a value of type V. */
// biome-ignore lint/suspicious/noExplicitAny: each editor narrows the value type; the table holds them all.
export type FieldEditor = (props: FieldProps<any>) => React.ReactNode

export const inputClass = 'w-full rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm aria-invalid:border-red-600'

export const newUid = () => crypto.randomUUID().replaceAll('-', '').slice(0, 20)
