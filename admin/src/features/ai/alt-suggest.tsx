import { useQuery } from '@tanstack/react-query'
import { Link } from '@tanstack/react-router'
import { useState } from 'react'
import { api, unwrap } from '../../api/client'
import { useCan } from '../../api/roles'
import { announce } from '../../components/announcer'
import { Button } from '../../components/ui'
import { aiStatusQuery } from './queries'
import { t } from './messages'

/** Whether the asset dialog offers alt-text suggestions: AI on with a vision model, and a role that may ask. */
export function useAltAi(space: string, canEdit: boolean, raster: boolean): boolean {
  const canAsk = useCan(space, 'POST', '/v1/spaces/{space}/ai/alt-text')
  const status = useQuery({ ...aiStatusQuery(space), enabled: canEdit && canAsk && raster })
  return canEdit && canAsk && raster && status.data?.enabled === true && !!status.data.vision
}

/**
 * "Suggest with AI" for one locale's alt text: the vision model's suggestion (POST .../ai/alt-text, an AI job awaiting
 * review) is put into the input as an unsaved edit; saving it approves the job (the asset dialog does that), and until
 * then the job waits in the AI review queue like any other.
 */
export function AltSuggest({ space, asset, locale, onSuggest }: { space: string; asset: string; locale: string; onSuggest: (alt: string, job: string) => void }) {
  const [state, setState] = useState<{ busy: boolean; text: string | null; error?: boolean; queued?: boolean }>({ busy: false, text: null })
  const ask = async () => {
    setState({ busy: true, text: t('aiField.altAsking') })
    try {
      const { data } = await unwrap(api.POST('/v1/spaces/{space}/ai/alt-text', { params: { path: { space } }, body: { asset_uuid: asset, lang: locale } }))
      const alt = typeof data.result?.alt === 'string' ? data.result.alt : ''
      onSuggest(alt, data.uuid)
      const text = t('aiField.altSuggested', { locale })
      setState({ busy: false, text, queued: true })
      announce(text)
    } catch (err) {
      const text = t('aiField.failed', { message: err instanceof Error ? err.message : String(err) })
      setState({ busy: false, text, error: true })
      announce(text)
    }
  }
  return (
    <div className="flex flex-wrap items-center gap-2">
      <Button className="px-2 py-0.5 text-xs" disabled={state.busy} onClick={() => void ask()} aria-label={t('aiField.altSuggestFor', { locale })}>
        {t('aiField.altSuggest')}
      </Button>
      {state.text ? (
        <span className={`text-xs ${state.error ? 'text-red-800' : 'text-slate-700'}`} data-testid="alt-ai-status">
          {state.text}{' '}
          {state.queued ? (
            <Link to="/spaces/$space/ai" params={{ space }} className="text-indigo-800 underline">
              {t('aiField.reviewQueue')}
            </Link>
          ) : null}
        </span>
      ) : null}
    </div>
  )
}
