/**
 * `x-admin`: how the admin app presents an operation, declared where the route is (`detail: {'x-admin': adminUi({...})}`)
 * like the guards' `x-min-role`. scripts/gen-admin-api.ts reads it from /v1/openapi.json and writes
 * admin/src/api/admin-manifest.ts: per resource the columns of its list, the fields of its forms (from the body's JSON
 * Schema), its actions and each one's minimum role; the admin's one resource screen renders from that manifest.
 * Labels are keys of the admin's message catalogs (admin/src/i18n/en.ts): the API carries no UI text.
 */

/** How a column's value is shown. */
export type AdminFormat = 'text' | 'datetime' | 'boolean' | 'list' | 'status' | 'code' | 'excerpt' | 'number'

export interface AdminColumn {
  /** A property of the answer's items. */
  key: string
  /** Catalog key of the column's heading. */
  label: string
  format?: AdminFormat
}

export interface AdminField {
  /** Catalog key of the field's label. */
  label: string
  /** Catalog key of a help text under the field. */
  help?: string
  /** Default: from the schema (string → text, boolean → checkbox, integer → number, enum → select, enum[] → checklist). */
  widget?: 'text' | 'url' | 'checkbox' | 'number' | 'select' | 'checklist'
  /** Position in the form (ascending; then the body's order). */
  order?: number
}

export type AdminUi =
  /** The resource's list: the screen's title and intro, which property names a row, its columns. */
  | { resource: string; op: 'list'; title: string; intro: string; name: string; columns: AdminColumn[]; empty: string }
  /** Create or update: the body's fields as a form. `secret`: a property of the answer shown once. */
  | { resource: string; op: 'create' | 'update'; label: string; fields: Record<string, AdminField>; secret?: string }
  /** A button per row. `danger`: asks first. `secret`: the answer's property shown once. */
  | { resource: string; op: 'delete' | 'action'; label: string; order?: number; danger?: boolean; secret?: string }
  /** Switch a boolean field of a row through the update operation (activate/deactivate). */
  | { resource: string; op: 'toggle'; field: string; on: string; off: string }
  /** Move a row up or down by swapping the update's integer `field` with its neighbour's. */
  | { resource: string; op: 'reorder'; field: string }
  /** A row's log: its columns and the query's enum parameters as filters. */
  | { resource: string; op: 'log'; label: string; columns: AdminColumn[]; filters?: Record<string, string>; empty: string }
  /** A button per log entry; `params` maps the path's extra parameters to properties of the entry. */
  | { resource: string; op: 'log-action'; label: string; params: Record<string, string> }

/** Typed identity: the route's `x-admin` (one operation may carry several, e.g. an update that also toggles). */
export const adminUi = (...ui: AdminUi[]): AdminUi | AdminUi[] => (ui.length === 1 ? ui[0]! : ui)
