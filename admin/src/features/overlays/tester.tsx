import { useMutation, useQuery } from '@tanstack/react-query'
import { type FormEvent, useId, useState } from 'react'
import { ApiFailure, api, unwrap } from '../../api/client'
import { localesQuery } from '../../api/queries'
import { CatalogError } from '../../components/catalog-error'
import { Button, FieldErrors, TextField } from '../../components/ui'
import { formatNumber } from '../../i18n'
import { segmentsQuery } from '../segments/queries'
import { refusals, t } from './messages'
import { ACTIONS } from './queries'

const INPUT = 'rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm aria-invalid:border-red-600'

/** A path and an HTML snippet in, the snippet after the active rules that path gets out (applied on the server). */
export function OverlayTester({ space }: { space: string }) {
  const titleId = useId()
  const ids = { html: useId(), lang: useId(), segment: useId(), result: useId() }
  const locales = useQuery(localesQuery(space))
  const segments = useQuery(segmentsQuery(space))
  const [path, setPath] = useState('/')
  const [html, setHtml] = useState('')
  const [lang, setLang] = useState('')
  const [segment, setSegment] = useState('')
  const run = useMutation({
    mutationFn: async () =>
      (
        await unwrap(
          api.POST('/v1/spaces/{space}/dom-overlays/test', {
            params: { path: { space } },
            body: { path, html, ...(lang ? { lang } : {}), segment_key: segment || null },
          }),
        )
      ).data,
  })
  const errors = run.error instanceof ApiFailure && run.error.status === 422 ? refusals(run.error.body.errors) : {}
  function submit(e: FormEvent) {
    e.preventDefault()
    run.mutate()
  }
  const result = run.data
  return (
    <section aria-labelledby={titleId} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="overlay-tester">
      <h2 id={titleId} className="text-lg font-semibold">
        {t('overlays.tester')}
      </h2>
      <p className="text-sm text-slate-700">{t('overlays.testerIntro')}</p>
      <form onSubmit={submit} className="flex flex-col gap-3" noValidate>
        <div className="flex flex-wrap gap-3">
          <TextField label={t('overlays.testPath')} value={path} onChange={(e) => setPath(e.target.value)} errors={errors.path} className="font-mono" autoComplete="off" />
          <div className="flex flex-col gap-1">
            <label htmlFor={ids.lang} className="text-sm font-medium text-slate-800">
              {t('overlays.testLang')}
            </label>
            <select id={ids.lang} className={INPUT} value={lang} onChange={(e) => setLang(e.target.value)} aria-invalid={errors.lang ? true : undefined}>
              <option value="">—</option>
              {(locales.data ?? []).map((l) => (
                <option key={l.code} value={l.code}>
                  {l.code}
                </option>
              ))}
            </select>
            <FieldErrors errors={errors.lang} />
          </div>
          <div className="flex flex-col gap-1">
            <label htmlFor={ids.segment} className="text-sm font-medium text-slate-800">
              {t('overlays.testSegment')}
            </label>
            <select id={ids.segment} className={INPUT} value={segment} onChange={(e) => setSegment(e.target.value)} aria-invalid={errors.segment_key ? true : undefined}>
              <option value="">{t('overlays.segmentNone')}</option>
              {(segments.data ?? []).map((s) => (
                <option key={s.key} value={s.key}>
                  {s.label}
                </option>
              ))}
            </select>
            <FieldErrors errors={errors.segment_key} />
          </div>
        </div>
        <div className="flex flex-col gap-1">
          <label htmlFor={ids.html} className="text-sm font-medium text-slate-800">
            {t('overlays.testHtml')}
          </label>
          <textarea
            id={ids.html}
            rows={6}
            className={`${INPUT} font-mono`}
            value={html}
            onChange={(e) => setHtml(e.target.value)}
            aria-invalid={errors.html ? true : undefined}
            spellCheck={false}
          />
          <FieldErrors errors={errors.html} />
        </div>
        {run.error && !(run.error instanceof ApiFailure && run.error.status === 422) ? <CatalogError error={run.error} /> : null}
        <div>
          <Button tone="primary" type="submit" disabled={run.isPending}>
            {t('overlays.run')}
          </Button>
        </div>
      </form>
      {result ? (
        <div className="flex flex-col gap-2" aria-live="polite">
          <h3 className="font-medium">{t('overlays.resultRules')}</h3>
          {result.rules.length ? (
            <ol className="list-decimal pl-6 text-sm" data-testid="overlay-test-rules">
              {result.rules.map((r) => (
                <li key={r.id}>
                  {r.name} · <span className="font-mono">{r.selector}</span> · {t(`overlays.action.${r.action as (typeof ACTIONS)[number]}`)} ·{' '}
                  {t('overlays.elements', { n: formatNumber(r.elements) })}
                </li>
              ))}
            </ol>
          ) : (
            <p className="text-sm">{t('overlays.noRules')}</p>
          )}
          {result.skipped.length ? <p className="text-sm text-red-700">{t('overlays.skipped', { n: formatNumber(result.skipped.length) })}</p> : null}
          <h3 id={ids.result} className="font-medium">
            {t('overlays.result')}
          </h3>
          <pre
            aria-labelledby={ids.result}
            tabIndex={0}
            className="max-h-80 overflow-auto rounded-md bg-slate-100 p-3 font-mono text-xs whitespace-pre-wrap text-slate-900"
            data-testid="overlay-test-result"
          >
            {result.html}
          </pre>
        </div>
      ) : null}
    </section>
  )
}
