import type { Change } from './doc-diff'
import { formatNumber, t } from '../i18n'

const KIND_TEXT = { added: 'diff.added', removed: 'diff.removed', changed: 'diff.changed', moved: 'diff.moved' } as const
const KIND_STYLE: Record<Change['kind'], string> = {
  added: 'bg-emerald-100 text-emerald-900',
  removed: 'bg-red-100 text-red-900',
  changed: 'bg-amber-100 text-amber-900',
  moved: 'bg-sky-100 text-sky-900',
}

/** One line per change: what (block or field, by path), and the old and new value as text. */
export function ChangeList({ changes, label, limit = 200 }: { changes: Change[]; label: string; limit?: number }) {
  if (changes.length === 0) return <p className="text-sm text-slate-700">{t('diff.none')}</p>
  const shown = changes.slice(0, limit)
  return (
    <>
      <ul aria-label={label} className="flex max-h-96 flex-col gap-2 overflow-auto text-sm">
        {shown.map((c) => (
          <li key={`${c.kind}:${c.path}`} data-change={c.kind} data-change-path={c.path} className="rounded-md bg-white p-2 ring-1 ring-slate-200">
            <div className="flex flex-wrap items-center gap-2">
              <span className={`rounded px-1.5 py-0.5 text-xs font-medium ${KIND_STYLE[c.kind]}`}>{t(KIND_TEXT[c.kind])}</span>
              <code className="text-xs">{c.path}</code>
              {c.component ? <span className="text-xs text-slate-600">{c.component}</span> : null}
            </div>
            {c.kind === 'moved' ? (
              <p className="mt-1 text-xs text-slate-700">
                {t('diff.from')} <code>{c.before}</code> {t('diff.to')} <code>{c.after}</code>
              </p>
            ) : (
              <dl className="mt-1 grid grid-cols-[auto_1fr] gap-x-2 text-xs">
                {c.before !== undefined ? (
                  <>
                    <dt className="text-slate-600">{t('diff.before')}</dt>
                    <dd className="whitespace-pre-wrap break-words text-red-900 line-through decoration-red-300">{c.before || t('diff.empty')}</dd>
                  </>
                ) : null}
                {c.after !== undefined ? (
                  <>
                    <dt className="text-slate-600">{t('diff.after')}</dt>
                    <dd className="whitespace-pre-wrap break-words text-emerald-900">{c.after || t('diff.empty')}</dd>
                  </>
                ) : null}
              </dl>
            )}
          </li>
        ))}
      </ul>
      {changes.length > shown.length ? <p className="text-xs text-slate-600">{t('diff.more', { count: formatNumber(changes.length - shown.length) })}</p> : null}
    </>
  )
}
