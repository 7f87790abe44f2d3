import { useQuery } from '@tanstack/react-query'
import { getRouteApi, Link } from '@tanstack/react-router'
import { useId, useState } from 'react'
import { useCan } from '../../api/roles'
import { Button, Dialog, ErrorNotice, Skeleton } from '../../components/ui'
import { t } from './messages'
import { EmbedPanel } from './embed-panel'
import { FormBuilder } from './form-builder'
import { formQuery } from './queries'
import { SubmissionsPanel } from './submissions-panel'

const route = getRouteApi('/app/spaces/$space/forms/$uuid')
type Tab = 'build' | 'embed' | 'submissions'

/** One form: its builder (or a new one at `forms/new`), its embed snippet and its submissions (admins). */
export function FormScreen() {
  const { space, uuid } = route.useParams()
  const { tab: asked } = route.useSearch()
  const titleId = useId()
  const isNew = uuid === 'new'
  const form = useQuery({ ...formQuery(space, uuid), enabled: !isNew })
  const canSubmissions = useCan(space, 'GET', '/v1/spaces/{space}/forms/{uuid}/submissions')
  const [secret, setSecret] = useState<string | null>(null)
  const tabs: Tab[] = isNew ? ['build'] : canSubmissions ? ['build', 'embed', 'submissions'] : ['build', 'embed']
  const tab: Tab = asked && tabs.includes(asked) ? asked : 'build'
  const data = isNew ? null : form.data
  return (
    <section className="flex flex-col gap-6" aria-labelledby={titleId}>
      <header className="flex flex-col gap-1">
        <Link to="/spaces/$space/forms" params={{ space }} className="text-sm text-indigo-800 underline">
          {t('forms.back')}
        </Link>
        <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">
          {isNew ? t('forms.new') : (data?.label ?? t('forms.title'))}
        </h1>
      </header>
      {tabs.length > 1 ? (
        <nav aria-label={t('forms.sections')} className="flex flex-wrap gap-2">
          {tabs.map((k) => (
            <Link
              key={k}
              to="/spaces/$space/forms/$uuid"
              params={{ space, uuid }}
              search={{ tab: k === 'build' ? undefined : k }}
              aria-current={tab === k ? 'page' : undefined}
              className="rounded-md px-3 py-1.5 text-sm font-medium ring-1 ring-slate-300 aria-[current=page]:bg-indigo-700 aria-[current=page]:text-white"
            >
              {t(`forms.tab.${k}`)}
            </Link>
          ))}
        </nav>
      ) : null}
      {!isNew && form.isPending ? <Skeleton lines={6} /> : null}
      {!isNew && form.error ? <ErrorNotice error={form.error} onRetry={() => form.refetch()} /> : null}
      {isNew || data ? (
        tab === 'build' ? (
          <FormBuilder key={data?.uuid ?? 'new'} space={space} form={data ?? null} onSecret={setSecret} />
        ) : tab === 'embed' && data ? (
          <EmbedPanel space={space} form={data} />
        ) : data ? (
          <SubmissionsPanel space={space} form={data} />
        ) : null
      ) : null}
      <Dialog open={secret !== null} title={t('forms.secretTitle')} onClose={() => setSecret(null)}>
        <p className="text-sm">{t('forms.secretText')}</p>
        <code className="block rounded bg-slate-100 p-2 font-mono text-xs break-all" data-testid="form-secret">
          {secret}
        </code>
        <div className="flex justify-end">
          <Button tone="primary" onClick={() => setSecret(null)}>
            {t('forms.secretDone')}
          </Button>
        </div>
      </Dialog>
    </section>
  )
}
