import { useQuery } from '@tanstack/react-query'
import { useId } from 'react'
import { toast } from '../../components/toast'
import { Button, ErrorNotice, Skeleton } from '../../components/ui'
import { t } from './messages'
import { embedSnippet } from './embed-snippet'
import { type Form, versionQuery } from './queries'

/**
 * The markup a site pastes to show the saved form (see embed-snippet.ts), with a Copy button. It carries the embed
 * script's SRI hash, so it is shown once /v1/version answered (without the hash only when that failed).
 */
export function EmbedPanel({ space, form }: { space: string; form: Form }) {
  const id = useId()
  const version = useQuery(versionQuery())
  const snippet = embedSnippet({ origin: location.origin, space, slug: form.slug, fields: form.fields, embed: version.data })
  return (
    <section aria-labelledby={`${id}-h`} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200">
      <h2 id={`${id}-h`} className="text-base font-semibold">
        {t('forms.embed.title')}
      </h2>
      <p className="text-sm text-slate-700">{t('forms.embed.intro')}</p>
      {version.error ? <ErrorNotice error={version.error} onRetry={() => version.refetch()} /> : null}
      {version.isPending ? (
        <Skeleton lines={8} />
      ) : (
        <>
          <label htmlFor={id} className="text-sm font-medium">
            {t('forms.embed.snippet')}
          </label>
          <textarea id={id} readOnly value={snippet} rows={16} spellCheck={false} className="w-full rounded-md border border-slate-300 bg-slate-50 p-2 font-mono text-xs" data-testid="embed-snippet" />
          <div>
            <Button
              tone="primary"
              onClick={async () => {
                try {
                  await navigator.clipboard.writeText(snippet)
                  toast(t('forms.embed.copied'))
                } catch {
                  toast(t('forms.embed.copyFailed'), 'error')
                }
              }}
            >
              {t('forms.embed.copy')}
            </Button>
          </div>
        </>
      )}
    </section>
  )
}
