import { t } from './messages'
import type { DatasourceView } from './datasource-form'

const TONE: Record<DatasourceView['status'], string> = {
  ok: 'bg-emerald-50 text-emerald-900 ring-emerald-300',
  error: 'bg-red-50 text-red-900 ring-red-300',
  never_synced: 'bg-slate-100 text-slate-800 ring-slate-300',
}

/** A datasource's state as a badge (words, not only a colour). */
export function DsStatus({ status }: { status: DatasourceView['status'] }) {
  return <span className={`inline-block rounded-full px-2 py-0.5 text-xs font-medium ring-1 ${TONE[status]}`}>{t(`ds.status.${status}`)}</span>
}
