import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { downloadFile } from '../../api/download'
import { useCan } from '../../api/roles'
import { CatalogError } from '../../components/catalog-error'
import { ListPager, ListToolbar } from '../../components/list-toolbar'
import { toast } from '../../components/toast'
import { Button, Dialog, EmptyState, ErrorNotice, Skeleton } from '../../components/ui'
import { formatDateTime, formatNumber } from '../../i18n'
import { t } from './messages'
import type { MessageKey } from './messages'
import { type Form, formKeys, type Submission, SUBMISSIONS_PER_PAGE, submissionsQuery } from './queries'

/** A stored value as text: a consent as yes/no with the text agreed to, a checkbox as yes/no. */
function valueOf(v: unknown): string {
  if (v === null || v === undefined) return ''
  if (typeof v === 'boolean') return v ? t('forms.yes') : t('forms.no')
  if (typeof v === 'object' && 'accepted' in (v as object)) {
    const c = v as { accepted: boolean; text?: string }
    return `${c.accepted ? t('forms.yes') : t('forms.no')}${c.text ? ` (${c.text})` : ''}`
  }
  return typeof v === 'object' ? JSON.stringify(v) : String(v)
}

const STATUS: Record<string, MessageKey> = { none: 'forms.status.none', pending: 'forms.status.pending', done: 'forms.status.done', failed: 'forms.status.failed' }

/**
 * A form's submissions (personal data: admin): newest first, a search over the values, the spam view, a submission's
 * detail with its spam switch, and the CSV export (through the API with the bearer token).
 */
export function SubmissionsPanel({ space, form }: { space: string; form: Form }) {
  const id = useId()
  const queryClient = useQueryClient()
  const [q, setQ] = useState('')
  const [spam, setSpam] = useState(false)
  const [page, setPage] = useState(1)
  const [open, setOpen] = useState<Submission | null>(null)
  const canToggle = useCan(space, 'POST', '/v1/spaces/{space}/forms/{uuid}/submissions/{submissionUuid}/spam')
  const list = useQuery(submissionsQuery(space, form.uuid, { q, spam, page }))
  const rows = list.data?.data ?? []
  const total = list.data?.meta.total ?? 0
  const shownKeys = form.fields.filter((f) => f.type !== 'hidden' && f.type !== 'file').slice(0, 3)

  const toggle = useMutation({
    mutationFn: async (s: Submission) =>
      (await unwrap(api.POST('/v1/spaces/{space}/forms/{uuid}/submissions/{submissionUuid}/spam', { params: { path: { space, uuid: form.uuid, submissionUuid: s.uuid } } }))).data,
    onSuccess: async (s) => {
      setOpen(null)
      await queryClient.invalidateQueries({ queryKey: formKeys.submissions(space, form.uuid) })
      toast(t(s.spam ? 'forms.markedSpam' : 'forms.markedNotSpam'))
    },
  })
  const csv = useMutation({
    mutationFn: () => downloadFile(`/v1/spaces/${encodeURIComponent(space)}/forms/${form.uuid}/submissions.csv`, `${form.slug}-submissions.csv`),
  })

  return (
    <section aria-labelledby={`${id}-h`} className="flex flex-col gap-4">
      <h2 id={`${id}-h`} className="text-base font-semibold">
        {t('forms.submissions')}
      </h2>
      <ListToolbar
        search={{ label: t('forms.search'), submit: t('forms.searchGo'), onSearch: (v) => (setQ(v), setPage(1)) }}
        exportCsv={{ label: t('forms.exportCsv'), onExport: () => csv.mutate(), busy: csv.isPending }}
      >
        <label className="flex items-center gap-2 pb-1.5 text-sm">
          <input type="checkbox" checked={spam} onChange={(e) => (setSpam(e.target.checked), setPage(1))} />
          {t('forms.spamView')}
        </label>
      </ListToolbar>
      <p className="text-xs text-slate-600">{t('forms.csvHint')}</p>
      <CatalogError error={csv.error} />
      {list.isPending ? <Skeleton lines={4} /> : null}
      {list.error ? <ErrorNotice error={list.error} onRetry={() => list.refetch()} /> : null}
      {list.data && rows.length === 0 ? <EmptyState title={spam ? t('forms.noSpam') : q ? t('forms.noMatch') : t('forms.noSubmissions')}>{!spam && !q ? t('forms.noSubmissionsHint') : null}</EmptyState> : null}
      {rows.length > 0 ? (
        <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{spam ? t('forms.spamView') : t('forms.submissions')}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                <th scope="col" className="px-3 py-2">{t('forms.col.submitted')}</th>
                {shownKeys.map((f) => (
                  <th key={f.key} scope="col" className="px-3 py-2">{f.label}</th>
                ))}
                <th scope="col" className="px-3 py-2">{t('forms.col.spamScore')}</th>
                <th scope="col" className="px-3 py-2">{t('forms.col.actionStatus')}</th>
                <th scope="col" className="px-3 py-2"><span className="sr-only">{t('resource.actions')}</span></th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.uuid} className="border-t border-slate-200 align-top" data-submission={s.uuid}>
                  <td className="px-3 py-2 whitespace-nowrap">{formatDateTime(s.submitted_at)}</td>
                  {shownKeys.map((f) => (
                    <td key={f.key} className="max-w-48 truncate px-3 py-2">{valueOf(s.data[f.key])}</td>
                  ))}
                  <td className="px-3 py-2">{formatNumber(s.spam_score, { maximumFractionDigits: 2 })}</td>
                  <td className="px-3 py-2">{STATUS[s.action_status] ? t(STATUS[s.action_status]!) : s.action_status}</td>
                  <td className="px-3 py-2 text-right">
                    <Button onClick={() => (toggle.reset(), setOpen(s))} aria-label={t('forms.detailOf', { when: formatDateTime(s.submitted_at) })}>
                      {t('forms.detail')}
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <ListPager page={page} perPage={SUBMISSIONS_PER_PAGE} total={total} onPage={setPage} />
      <Dialog open={open !== null} title={t('forms.submissionTitle', { when: formatDateTime(open?.submitted_at) })} onClose={() => setOpen(null)}>
        {open ? (
          <>
            <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm" data-testid="submission-detail">
              {form.fields.map((f) => (
                <div key={f.key} className="contents">
                  <dt className="font-medium text-slate-700">{f.type === 'consent' ? f.key : f.label}</dt>
                  <dd className="break-words whitespace-pre-wrap">{valueOf(open.data[f.key])}</dd>
                </div>
              ))}
              <dt className="font-medium text-slate-700">{t('forms.col.lang')}</dt>
              <dd>{open.lang ?? t('common.none')}</dd>
              <dt className="font-medium text-slate-700">{t('forms.col.referrer')}</dt>
              <dd className="break-all">{open.referrer ?? t('common.none')}</dd>
              <dt className="font-medium text-slate-700">{t('forms.col.spamScore')}</dt>
              <dd>{`${formatNumber(open.spam_score, { maximumFractionDigits: 2 })} · ${open.spam ? t('forms.isSpam') : t('forms.notSpam')}`}</dd>
              <dt className="font-medium text-slate-700">{t('forms.col.actionStatus')}</dt>
              <dd>{STATUS[open.action_status] ? t(STATUS[open.action_status]!) : open.action_status}{open.action_error ? ` — ${open.action_error}` : ''}</dd>
            </dl>
            <CatalogError error={toggle.error} />
            <div className="flex justify-end gap-2">
              {canToggle ? (
                <Button tone={open.spam ? 'secondary' : 'danger'} disabled={toggle.isPending} onClick={() => toggle.mutate(open)}>
                  {open.spam ? t('forms.markNotSpam') : t('forms.markSpam')}
                </Button>
              ) : null}
              <Button onClick={() => setOpen(null)}>{t('forms.close')}</Button>
            </div>
          </>
        ) : null}
      </Dialog>
    </section>
  )
}
