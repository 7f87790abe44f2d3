import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router'
import { useId, useState } from 'react'
import { ApiFailure, api, unwrap } from '../../api/client'
import { useCan } from '../../api/roles'
import { CatalogError } from '../../components/catalog-error'
import { Pager } from '../../components/pager'
import { toast } from '../../components/toast'
import { Button, Dialog, EmptyState, ErrorNotice, Skeleton } from '../../components/ui'
import { errorText, formatDateTime, formatNumber } from '../../i18n'
import { t } from './messages'
import { DatasourceForm, type DatasourceView } from './datasource-form'
import { copyText, useDebounced } from '../../components/form-hooks'
import { datasourceQuery, dsKeys, entriesQuery, usageQuery } from './queries'
import { takeSecret } from './secret-once'
import { DsStatus } from './status'
import { lastErrorText, runInWords } from './words'

const route = getRouteApi('/app/spaces/$space/datasources/$key')
const BOX = 'rounded-lg bg-white p-4 ring-1 ring-slate-200'

/** One datasource: its state, sync now, its settings, the push secret and a signed example, entries, and its Stories. */
export function DatasourceScreen() {
  const { space, key } = route.useParams()
  const titleId = useId()
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const ds = useQuery(datasourceQuery(space, key))
  const canWrite = useCan(space, 'PATCH', '/v1/spaces/{space}/datasources/{key}')
  const [secret, setSecret] = useState<string | null>(() => takeSecret(key))
  const [deleting, setDeleting] = useState(false)
  const refresh = () => queryClient.invalidateQueries({ queryKey: dsKeys.all(space) })

  const sync = useMutation({
    mutationFn: async () => (await unwrap(api.POST('/v1/spaces/{space}/datasources/{key}/sync', { params: { path: { space, key } } }))).data,
    onSuccess: (r) => toast(t('ds.synced', { entries: formatNumber(r.entries), revision: formatNumber(r.revision) })),
    onSettled: refresh,
  })
  const rotate = useMutation({
    mutationFn: async () => (await unwrap(api.POST('/v1/spaces/{space}/datasources/{key}/rotate-secret', { params: { path: { space, key } } }))).data,
    onSuccess: async (r) => {
      setSecret(r.webhook_secret ?? null)
      await refresh()
    },
  })
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/spaces/{space}/datasources/{key}', { params: { path: { space, key } } })),
    onSuccess: async () => {
      toast(t('ds.deleted', { key }))
      await queryClient.invalidateQueries({ queryKey: dsKeys.all(space) })
      await navigate({ to: '/spaces/$space/datasources', params: { space } })
    },
  })

  const d = ds.data as DatasourceView | undefined
  return (
    <section className="flex flex-col gap-4" aria-labelledby={titleId}>
      <p className="text-sm">
        <Link to="/spaces/$space/datasources" params={{ space }} className="text-indigo-800 underline">
          {t('ds.back')}
        </Link>
      </p>
      <header className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">
            {d?.label ?? key}
          </h1>
          <p className="text-sm text-slate-700">
            <span className="font-mono">{key}</span> · {d ? t(`ds.type.${d.type}`) : null}
          </p>
        </div>
        {d && canWrite ? (
          <div className="flex flex-wrap gap-2">
            {d.type === 'http_json' ? (
              <Button tone="primary" onClick={() => sync.mutate()} disabled={sync.isPending}>
                {sync.isPending ? t('ds.syncing') : t('ds.syncNow')}
              </Button>
            ) : null}
            <Button tone="danger" onClick={() => setDeleting(true)}>
              {t('ds.delete')}
            </Button>
          </div>
        ) : null}
      </header>
      {ds.isPending ? <Skeleton lines={5} /> : null}
      <ErrorNotice error={ds.error} onRetry={() => ds.refetch()} />
      {sync.error ? (
        <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 ring-1 ring-red-200" data-testid="sync-error">
          {t('ds.syncFailed')} {syncReason(sync.error)}
        </p>
      ) : null}
      {d ? (
        <>
          <section aria-labelledby={`${titleId}-state`} className={BOX} data-testid="ds-state">
            <h2 id={`${titleId}-state`} className="mb-2 font-semibold">
              {t('ds.state')}
            </h2>
            <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm">
              <dt className="text-slate-700">{t('ds.state')}</dt>
              <dd>
                <DsStatus status={d.status} />
              </dd>
              <dt className="text-slate-700">{t('ds.lastSync')}</dt>
              <dd>{d.last_synced_at ? formatDateTime(d.last_synced_at) : t('common.never')}</dd>
              <dt className="text-slate-700">{t('ds.revision')}</dt>
              <dd>{formatNumber(d.revision)}</dd>
              <dt className="text-slate-700">{t('ds.entries')}</dt>
              <dd>{formatNumber(d.entry_count)}</dd>
              {d.type === 'http_json' ? (
                <>
                  <dt className="text-slate-700">{t('ds.nextRun')}</dt>
                  <dd>{d.next_run_at ? runInWords(d.next_run_at) : t('common.none')}</dd>
                </>
              ) : null}
              {d.last_error ? (
                <>
                  <dt className="text-slate-700">{t('ds.lastError')}</dt>
                  <dd className="text-red-800" data-testid="last-error">
                    {lastErrorText(d.last_error)}
                  </dd>
                </>
              ) : null}
            </dl>
          </section>
          {d.type === 'webhook_push' ? (
            <PushPanel space={space} dsKey={key} fingerprint={d.config.secret_fingerprint} secret={secret} canWrite={canWrite} onRotate={() => rotate.mutate()} rotating={rotate.isPending} error={rotate.error} />
          ) : null}
          {canWrite ? (
            <section aria-labelledby={`${titleId}-settings`} className={BOX}>
              <h2 id={`${titleId}-settings`} className="mb-2 font-semibold">
                {t('ds.settings')}
              </h2>
              <DatasourceForm key={`${d.key}:${d.label}:${JSON.stringify(d.config)}`} space={space} current={d} onSaved={() => toast(t('ds.saved'))} />
            </section>
          ) : null}
          <Entries space={space} dsKey={key} revision={d.revision} />
          <Usage space={space} dsKey={key} />
        </>
      ) : null}
      <Dialog open={deleting} title={t('ds.deleteTitle', { key })} onClose={() => setDeleting(false)}>
        <p className="text-sm">{t('ds.deleteText')}</p>
        <CatalogError error={remove.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => setDeleting(false)}>{t('common.cancel')}</Button>
          <Button tone="danger" onClick={() => remove.mutate()} disabled={remove.isPending}>
            {t('ds.delete')}
          </Button>
        </div>
      </Dialog>
    </section>
  )
}

/** Why `POST …/sync` failed, in words: the reason the 502's message carries, through the catalog. */
function syncReason(error: unknown): string {
  const reason = error instanceof ApiFailure ? /failed: (.*)\. The last good entries/.exec(error.body.message)?.[1] : undefined
  return reason ? lastErrorText(reason) : errorText(error)
}

/** webhook_push: the secret (shown once, after create or rotate), rotate, and a signed curl to copy. */
function PushPanel(props: { space: string; dsKey: string; fingerprint?: string; secret: string | null; canWrite: boolean; onRotate: () => void; rotating: boolean; error: unknown }) {
  const { space, dsKey, fingerprint, secret } = props
  const id = useId()
  const [confirming, setConfirming] = useState(false)
  const endpoint = `${location.origin}/v1/spaces/${space}/datasources/${dsKey}/webhook`
  const curl = [
    `SECRET='${secret ?? '<secret>'}'`,
    `BODY='[{"id":"a","name":"Alpha"}]'`,
    'TS=$(date +%s)',
    `SIG=$(printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')`,
    `curl -X POST '${endpoint}' \\`,
    `  -H 'Content-Type: application/json' -H "X-Service-Timestamp: $TS" -H "X-Service-Signature: sha256=$SIG" \\`,
    `  --data "$BODY"`,
  ].join('\n')
  return (
    <section aria-labelledby={id} className={`${BOX} flex flex-col gap-3`} data-testid="push-panel">
      <h2 id={id} className="font-semibold">
        {t('ds.push')}
      </h2>
      {secret ? (
        <div className="rounded-md bg-amber-50 p-3 text-sm text-amber-950 ring-1 ring-amber-300" role="status">
          <p className="font-medium">{t('ds.secretOnce')}</p>
          <code className="block break-all font-mono" data-testid="secret">
            {secret}
          </code>
          <Button className="mt-2" onClick={async () => toast((await copyText(secret)) ? t('ds.copied') : t('ds.copyFailed'))}>
            {t('ds.copySecret')}
          </Button>
        </div>
      ) : fingerprint ? (
        <p className="text-sm">{t('ds.fingerprint', { fingerprint })}</p>
      ) : null}
      {props.canWrite ? (
        <div>
          <Button onClick={() => setConfirming(true)} disabled={props.rotating}>
            {t('ds.rotate')}
          </Button>
        </div>
      ) : null}
      <CatalogError error={props.error} />
      <div className="flex flex-col gap-1">
        <p className="text-sm">{t('ds.curlIntro')}</p>
        <pre tabIndex={0} aria-label={t('ds.curl')} className="overflow-x-auto rounded-md bg-slate-900 p-3 text-xs text-slate-50" data-testid="curl">
          {curl}
        </pre>
        <div>
          <Button onClick={async () => toast((await copyText(curl)) ? t('ds.copied') : t('ds.copyFailed'))}>{t('ds.copyCurl')}</Button>
        </div>
      </div>
      <Dialog open={confirming} title={t('ds.rotateTitle')} onClose={() => setConfirming(false)}>
        <p className="text-sm">{t('ds.rotateText')}</p>
        <div className="flex justify-end gap-2">
          <Button onClick={() => setConfirming(false)}>{t('common.cancel')}</Button>
          <Button
            tone="danger"
            onClick={() => {
              setConfirming(false)
              props.onRotate()
            }}
          >
            {t('ds.rotate')}
          </Button>
        </div>
      </Dialog>
    </section>
  )
}

/** The entries as markers see them: a page at a time, searchable. */
function Entries({ space, dsKey, revision }: { space: string; dsKey: string; revision: number }) {
  const id = useId()
  const [page, setPage] = useState(1)
  const [q, setQ] = useState('')
  const search = useDebounced(q.trim(), 250)
  const entries = useQuery(entriesQuery(space, dsKey, page, search, revision ?? null))
  const data = entries.data
  return (
    <section aria-labelledby={id} className={`${BOX} flex flex-col gap-3`}>
      <h2 id={id} className="font-semibold">
        {t('ds.entries')}
      </h2>
      <label className="flex max-w-sm flex-col gap-1 text-sm">
        <span className="font-medium">{t('ds.search')}</span>
        <input
          type="search"
          value={q}
          onChange={(e) => {
            setQ(e.target.value)
            setPage(1)
          }}
          className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm"
        />
      </label>
      <ErrorNotice error={entries.error} onRetry={() => entries.refetch()} />
      {data && data.data.length === 0 ? <p className="text-sm text-slate-700">{search ? t('ds.noMatches') : t('ds.noEntries')}</p> : null}
      {data?.data.length ? (
        <>
          <p className="text-sm text-slate-700" aria-live="polite">
            {t('ds.entriesCount', { total: formatNumber(data.meta.total) })}
          </p>
          <ol className="flex flex-col gap-2" start={(data.meta.page - 1) * data.meta.per_page + 1} data-testid="entries">
            {data.data.map((e, i) => (
              <li key={i}>
                <pre tabIndex={0} className="overflow-x-auto rounded-md bg-slate-50 p-2 text-xs ring-1 ring-slate-200">
                  {JSON.stringify(e)}
                </pre>
              </li>
            ))}
          </ol>
          <Pager page={data.meta.page} perPage={data.meta.per_page} total={data.meta.total} onPage={setPage} />
        </>
      ) : null}
    </section>
  )
}

/** The Stories whose drafts hold this key's `$ds:` markers. */
function Usage({ space, dsKey }: { space: string; dsKey: string }) {
  const id = useId()
  const usage = useQuery(usageQuery(space, dsKey))
  return (
    <section aria-labelledby={id} className={`${BOX} flex flex-col gap-2`} data-testid="usage">
      <h2 id={id} className="font-semibold">
        {t('ds.usage')}
      </h2>
      <p className="text-sm text-slate-700">
        {t('ds.usageIntro')} <code>{`$ds:${dsKey}.0.name`}</code>
      </p>
      <ErrorNotice error={usage.error} onRetry={() => usage.refetch()} />
      {usage.data ? (
        usage.data.stories.length ? (
          <ul className="list-disc pl-5 text-sm">
            {usage.data.stories.map((s) => (
              <li key={s.uuid}>
                <Link to="/spaces/$space/stories/$uuid" params={{ space, uuid: s.uuid }} className="text-indigo-800 underline">
                  {s.name}
                </Link>{' '}
                <span className="font-mono text-xs text-slate-600">{s.full_path}</span> <span className="text-xs text-slate-600">({s.langs.join(', ')})</span>
              </li>
            ))}
          </ul>
        ) : (
          <EmptyState title={t('ds.unused')} />
        )
      ) : null}
    </section>
  )
}
