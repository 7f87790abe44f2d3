import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi, Link } from '@tanstack/react-router'
import { useId, useState } from 'react'
import { ApiFailure, api, unwrap } from '../../api/client'
import { storyQuery } from '../../api/queries'
import { useCan } from '../../api/roles'
import { CatalogError } from '../../components/catalog-error'
import { diffStories } from '../../components/doc-diff'
import { ListPager, ListToolbar } from '../../components/list-toolbar'
import { Notice } from '../../components/notice'
import { StatusPill } from '../../components/resource/cells'
import { valueText } from '../../components/resource/call'
import { Button, EmptyState, Loading } from '../../components/ui'
import { formatDateTime, formatNumber, t } from '../../i18n'
import { Meter } from '../../components/meter'
import { aiJobsQuery, aiStatusQuery, JOB_KINDS, JOB_STATUSES, type JobKind, type JobStatus, PER_PAGE } from './queries'
import { queryKeys } from '../../api/keys'

const route = getRouteApi('/app/spaces/$space/ai')

type AiJob = { uuid: string; kind: string; status: string; target: Record<string, unknown>; result: Record<string, unknown> | null; error: string | null; usage: { prompt_tokens: number; completion_tokens: number }; created_at: string; decided_at: string | null }

/** AI: whether it is on and this month's use, the jobs queue (filters), a job's changes and the decision on it. */
export function AiScreen() {
  const { space } = route.useParams()
  const titleId = useId()
  const [status, setStatus] = useState<JobStatus | ''>('awaiting_review')
  const [kind, setKind] = useState<JobKind | ''>('')
  const [page, setPage] = useState(1)
  const [open, setOpen] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const jobs = useQuery(aiJobsQuery(space, { status: status || undefined, kind: kind || undefined, page }))
  const rows = (jobs.data?.data ?? []) as AiJob[]
  const total = jobs.data?.meta.total ?? 0
  const selected = rows.find((j) => j.uuid === open) ?? null
  return (
    <section className="flex flex-col gap-6" aria-labelledby={titleId}>
      <header>
        <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">
          {t('ai.title')}
        </h1>
        <p className="text-sm text-slate-700">{t('ai.intro')}</p>
      </header>
      <Notice text={notice} />
      <AiStatus space={space} />
      <ListToolbar
        filters={[
          { label: t('ai.filterStatus'), value: status, options: JOB_STATUSES, optionText: valueText, onChange: (v) => (setStatus(v as JobStatus | ''), setPage(1)) },
          { label: t('ai.filterKind'), value: kind, options: JOB_KINDS, optionText: valueText, onChange: (v) => (setKind(v as JobKind | ''), setPage(1)) },
        ]}
      >
        <Button onClick={() => jobs.refetch()} disabled={jobs.isFetching}>
          {t('resource.refresh')}
        </Button>
      </ListToolbar>
      {jobs.isPending ? <Loading what={t('common.loading')} /> : null}
      <CatalogError error={jobs.error} />
      {jobs.data && rows.length === 0 ? <EmptyState title={t('ai.empty')}>{t('ai.emptyHint')}</EmptyState> : null}
      {rows.length > 0 ? (
        <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{t('ai.jobs')}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                <th scope="col" className="px-3 py-2">{t('ai.col.created')}</th>
                <th scope="col" className="px-3 py-2">{t('ai.col.kind')}</th>
                <th scope="col" className="px-3 py-2">{t('ai.col.status')}</th>
                <th scope="col" className="px-3 py-2">{t('ai.col.target')}</th>
                <th scope="col" className="px-3 py-2">{t('ai.col.tokens')}</th>
                <th scope="col" className="px-3 py-2"><span className="sr-only">{t('resource.actions')}</span></th>
              </tr>
            </thead>
            <tbody>
              {rows.map((job) => (
                <tr key={job.uuid} className="border-t border-slate-200" data-job={job.uuid}>
                  <td className="px-3 py-2">{formatDateTime(job.created_at)}</td>
                  <td className="px-3 py-2">{valueText(job.kind)}</td>
                  <td className="px-3 py-2"><StatusPill value={job.status} /></td>
                  <td className="px-3 py-2"><Target space={space} job={job} /></td>
                  <td className="px-3 py-2">{formatNumber(job.usage.prompt_tokens + job.usage.completion_tokens)}</td>
                  <td className="px-3 py-2 text-right">
                    <Button aria-pressed={open === job.uuid} onClick={() => setOpen(open === job.uuid ? null : job.uuid)}>
                      {t('ai.review')}
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <ListPager page={page} perPage={PER_PAGE} total={total} onPage={setPage} />
      {selected ? <JobReview key={selected.uuid} space={space} job={selected} onDecided={setNotice} /> : null}
    </section>
  )
}

function Target({ space, job }: { space: string; job: AiJob }) {
  const tg = job.target
  if (job.kind === 'translate' && typeof tg.story_uuid === 'string')
    return (
      <Link to="/spaces/$space/stories/$uuid" params={{ space, uuid: tg.story_uuid }} search={{ lang: String(tg.target_lang ?? '') || undefined }} className="text-indigo-800 underline">
        {t('ai.translation', { from: String(tg.source_lang ?? ''), to: String(tg.target_lang ?? '') })}
      </Link>
    )
  return <span>{t('ai.altText', { lang: String(tg.lang ?? '') })}</span>
}

/** This month's use against the budget, whether AI is on, and its models. */
function AiStatus({ space }: { space: string }) {
  const status = useQuery(aiStatusQuery(space))
  const headingId = useId()
  if (status.isPending) return <Loading what={t('common.loading')} />
  if (status.error) return <CatalogError error={status.error} />
  const s = status.data
  const used = s.usage.prompt_tokens + s.usage.completion_tokens
  const budget = s.limits.monthly_tokens
  return (
    <section aria-labelledby={headingId} className="rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="ai-status">
      <h2 id={headingId} className="text-base font-semibold">{t('ai.status')}</h2>
      <dl className="mt-2 grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm">
        <dt className="text-slate-700">{t('ai.enabled')}</dt>
        <dd>{s.enabled ? t('common.yes') : t('ai.disabled')}</dd>
        <dt className="text-slate-700">{t('ai.model')}</dt>
        <dd><code>{s.model ?? t('common.none')}</code>{s.vision ? <> · <code>{s.vision}</code></> : null}</dd>
        <dt className="text-slate-700">{t('ai.month', { month: s.usage.month })}</dt>
        <dd>{budget === null ? t('ai.usedUnlimited', { used: formatNumber(used), requests: formatNumber(s.usage.requests) }) : t('ai.used', { used: formatNumber(used), budget: formatNumber(budget), requests: formatNumber(s.usage.requests) })}</dd>
      </dl>
      {budget !== null ? <Meter label={t('ai.budget')} value={used} max={budget} /> : null}
    </section>
  )
}

/** A job's result against what is there now (the Story in the target locale, the asset's alt text), and the decision. */
function JobReview({ space, job, onDecided }: { space: string; job: AiJob; onDecided: (text: string) => void }) {
  const headingId = useId()
  const queryClient = useQueryClient()
  const canDecide = useCan(space, 'POST', '/v1/spaces/{space}/ai-jobs/{aiJob}/approve')
  const decide = useMutation({
    mutationFn: (what: 'approve' | 'reject') =>
      what === 'approve'
        ? unwrap(api.POST('/v1/spaces/{space}/ai-jobs/{aiJob}/approve', { params: { path: { space, aiJob: job.uuid } } }))
        : unwrap(api.POST('/v1/spaces/{space}/ai-jobs/{aiJob}/reject', { params: { path: { space, aiJob: job.uuid } } })),
    onSuccess: async (_d, what) => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.aiJobs(space) })
      await queryClient.invalidateQueries({ queryKey: queryKeys.stories(space) })
      onDecided(t(what === 'approve' ? 'ai.approved' : 'ai.rejected'))
    },
  })
  const reviewable = job.status === 'awaiting_review'
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="ai-review">
      <h2 id={headingId} className="text-base font-semibold">{t('ai.reviewTitle')}</h2>
      {job.error ? <p className="text-sm text-red-800">{job.error}</p> : null}
      {job.kind === 'translate' ? <TranslationDiff space={space} job={job} /> : <AltDiff job={job} />}
      <CatalogError error={decide.error} />
      {canDecide && reviewable ? (
        <div className="flex gap-2">
          <Button tone="primary" disabled={decide.isPending} onClick={() => decide.mutate('approve')}>{t('ai.approve')}</Button>
          <Button tone="danger" disabled={decide.isPending} onClick={() => decide.mutate('reject')}>{t('ai.reject')}</Button>
        </div>
      ) : null}
      {!reviewable ? <p className="text-sm text-slate-700">{t('ai.decidedAt', { status: valueText(job.status), at: formatDateTime(job.decided_at ?? job.created_at) })}</p> : null}
    </section>
  )
}

function TranslationDiff({ space, job }: { space: string; job: AiJob }) {
  const uuid = String(job.target.story_uuid ?? '')
  const lang = String(job.target.target_lang ?? '')
  const current = useQuery({ ...storyQuery(space, uuid, lang), retry: false })
  // No version in the target locale yet (404 translation_not_found): everything the job proposes is new.
  const missing = current.error instanceof ApiFailure && current.error.body.error === 'translation_not_found'
  if (current.isPending) return <Loading what={t('common.loading')} />
  if (current.error && !missing) return <CatalogError error={current.error} />
  if (!job.result) return <p className="text-sm text-slate-700">{t('ai.noResult')}</p>
  const now = missing ? { name: '', content: null } : { name: current.data!.name, content: current.data!.content }
  const changes = diffStories(now, { name: String(job.result.name ?? now.name), content: job.result.content })
  return (
    <>
      <p className="text-sm text-slate-700">{missing ? t('ai.diffNew', { lang }) : t('ai.diffIntro', { lang })}</p>
      {changes.length === 0 ? <p className="text-sm">{t('ai.noChanges')}</p> : null}
      <ul aria-label={t('ai.changes')} className="flex max-h-96 flex-col gap-2 overflow-auto text-sm">
        {changes.slice(0, 200).map((c) => (
          <li key={`${c.kind}:${c.path}`} data-change={c.kind} className="rounded-md p-2 ring-1 ring-slate-200">
            <div className="flex flex-wrap items-center gap-2">
              <StatusPill value={c.kind} />
              <code className="text-xs">{c.path}</code>
            </div>
            <dl className="mt-1 grid grid-cols-[auto_1fr] gap-x-2 text-xs">
              {c.before !== undefined ? (
                <>
                  <dt className="text-slate-700">{t('ai.now')}</dt>
                  <dd className="whitespace-pre-wrap break-words text-red-900">{c.before || t('ai.empty.value')}</dd>
                </>
              ) : null}
              {c.after !== undefined ? (
                <>
                  <dt className="text-slate-700">{t('ai.proposed')}</dt>
                  <dd className="whitespace-pre-wrap break-words text-emerald-900">{c.after || t('ai.empty.value')}</dd>
                </>
              ) : null}
            </dl>
          </li>
        ))}
      </ul>
    </>
  )
}

function AltDiff({ job }: { job: AiJob }) {
  const r = job.result ?? {}
  return (
    <dl className="grid grid-cols-[auto_1fr] gap-x-3 text-sm">
      <dt className="text-slate-700">{t('ai.now')}</dt>
      <dd>{typeof r.previous_alt === 'string' && r.previous_alt ? r.previous_alt : t('ai.empty.value')}</dd>
      <dt className="text-slate-700">{t('ai.proposed')}</dt>
      <dd>{typeof r.alt === 'string' ? r.alt : t('ai.noResult')}</dd>
    </dl>
  )
}
