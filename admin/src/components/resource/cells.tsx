import type { ManifestColumn } from '../../api/manifest-types'
import { formatDateTime, t } from '../../i18n'
import { type Row, valueText } from './call'

const STATUS: Record<string, string> = {
  delivered: 'bg-emerald-100 text-emerald-900',
  allow: 'bg-emerald-100 text-emerald-900',
  approved: 'bg-emerald-100 text-emerald-900',
  pending: 'bg-amber-100 text-amber-900',
  queued: 'bg-amber-100 text-amber-900',
  running: 'bg-amber-100 text-amber-900',
  awaiting_review: 'bg-indigo-100 text-indigo-900',
  amend: 'bg-indigo-100 text-indigo-900',
  failed: 'bg-red-100 text-red-900',
  error: 'bg-red-100 text-red-900',
  veto: 'bg-red-100 text-red-900',
  rejected: 'bg-slate-200 text-slate-800',
}

export function StatusPill({ value }: { value: string }) {
  return <span className={`rounded px-1.5 py-0.5 text-xs font-medium ${STATUS[value] ?? 'bg-slate-200 text-slate-800'}`}>{valueText(value)}</span>
}

/** One cell of a manifest column, formatted as the column says. */
export function Cell({ column, row }: { column: ManifestColumn; row: Row }) {
  const v = row[column.key]
  if (v === null || v === undefined || v === '') return <span className="text-slate-600">—</span>
  switch (column.format) {
    case 'datetime':
      return <>{formatDateTime(String(v))}</>
    case 'boolean':
      return <>{v ? t('common.yes') : t('common.no')}</>
    case 'list':
      return (
        <ul className="flex max-w-72 flex-wrap gap-1">
          {(v as unknown[]).map((item) => (
            <li key={String(item)}>
              <code className="rounded bg-slate-100 px-1 text-xs">{String(item)}</code>
            </li>
          ))}
        </ul>
      )
    case 'status':
      return <StatusPill value={String(v)} />
    case 'code':
      return <code className="break-all text-xs">{String(v)}</code>
    case 'excerpt': {
      const text = String(v)
      return (
        <span className="block max-w-64 truncate text-xs" title={text}>
          {text}
        </span>
      )
    }
    default:
      return <>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</>
  }
}
