/**
 * The shape of admin/src/api/admin-manifest.ts, which scripts/gen-admin-api.ts generates from the routes' `x-admin`
 * (src/kernel/admin-ui.ts) and their JSON Schemas. Labels are keys of the message catalogs (i18n/en.ts);
 * test/admin-api.test.ts checks that each one exists.
 */
export type ManifestRole = 'viewer' | 'editor' | 'admin'
export type ManifestFormat = 'text' | 'datetime' | 'boolean' | 'list' | 'status' | 'code' | 'excerpt' | 'number'

export interface ManifestColumn {
  key: string
  label: string
  format: ManifestFormat
}

export interface ManifestField {
  name: string
  label: string
  help?: string
  widget: 'text' | 'url' | 'checkbox' | 'number' | 'select' | 'checklist'
  required: boolean
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  minItems?: number
  options?: readonly string[]
}

export interface ManifestOperation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  minRole: ManifestRole
}

export interface ManifestResource {
  title: string
  intro: string
  empty: string
  /** The property that names a row (in confirmations and button labels). */
  name: string
  /** The item path's parameter (`{id}`) and the row property that fills it. */
  itemParam: string
  itemKey: string
  list: ManifestOperation & { columns: readonly ManifestColumn[]; paged: boolean }
  create?: ManifestOperation & { label: string; fields: readonly ManifestField[]; secret?: string }
  update?: ManifestOperation & { label: string; fields: readonly ManifestField[] }
  toggle?: ManifestOperation & { field: string; on: string; off: string }
  reorder?: ManifestOperation & { field: string }
  actions: readonly (ManifestOperation & { kind: 'delete' | 'action'; label: string; danger: boolean; secret?: string })[]
  log?: ManifestOperation & { label: string; empty: string; columns: readonly ManifestColumn[]; filters: readonly { param: string; label: string; options: readonly string[] }[] }
  logActions: readonly (ManifestOperation & { label: string; params: Readonly<Record<string, string>> })[]
}
