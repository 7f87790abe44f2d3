import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, type ReactNode, useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { CatalogError } from '../../components/catalog-error'
import { Button, FieldErrors, TextField } from '../../components/ui'
import { errorText, formatNumber } from '../../i18n'
import { t } from './messages'
import { errorsAt, useDebounced } from '../../components/form-hooks'
import { cronPreviewQuery, dsKeys } from './queries'
import { runInWords } from './words'

export interface DatasourceView {
  key: string
  label: string
  type: 'http_json' | 'webhook_push'
  config: { url?: string; json_path?: string; cron?: string; headers?: Record<string, string>; allow_unsigned?: boolean; schema?: Record<string, string>; secret_fingerprint?: string }
  status: 'ok' | 'error' | 'never_synced'
  revision: number
  entry_count: number
  last_synced_at: string | null
  last_error: string | null
  next_run_at?: string | null
}

export const MASK = '••••'
const FIELD_TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array'] as const
const INPUT = 'rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm aria-invalid:border-red-600'

interface Row {
  name: string
  value: string
}

/**
 * Create or edit a datasource: http_json (URL, JSONPath with "Test it" against the last pull, cron with its next runs
 * in words, headers with their values masked) or webhook_push (unsigned pushes, the field schema). The secret of a new
 * push datasource comes back once: `onSaved` gets it.
 */
export function DatasourceForm({
  space,
  current,
  onSaved,
  onCancel,
}: {
  space: string
  current?: DatasourceView
  onSaved: (saved: DatasourceView & { webhook_secret?: string }) => void
  onCancel?: () => void
}) {
  const queryClient = useQueryClient()
  const [key, setKey] = useState('')
  const [label, setLabel] = useState(current?.label ?? '')
  const [type, setType] = useState<'http_json' | 'webhook_push'>(current?.type ?? 'http_json')
  const [url, setUrl] = useState(current?.config.url ?? '')
  const [jsonPath, setJsonPath] = useState(current?.config.json_path ?? '$')
  const [cron, setCron] = useState(current?.config.cron ?? '0 * * * *')
  const [headers, setHeaders] = useState<Row[]>(Object.keys(current?.config.headers ?? {}).map((name) => ({ name, value: MASK })))
  const [unsigned, setUnsigned] = useState(current?.config.allow_unsigned ?? false)
  const [schema, setSchema] = useState<Row[]>(Object.entries(current?.config.schema ?? {}).map(([name, value]) => ({ name, value })))
  const typeName = useId()
  const debouncedCron = useDebounced(cron, 300)
  const runs = useQuery({ ...cronPreviewQuery(space, debouncedCron), enabled: type === 'http_json' && debouncedCron.trim() !== '' })

  const save = useMutation({
    mutationFn: async () => {
      const config =
        type === 'http_json'
          ? { url, json_path: jsonPath, cron, headers: Object.fromEntries(headers.filter((h) => h.name.trim()).map((h) => [h.name.trim(), h.value])) }
          : { allow_unsigned: unsigned, schema: Object.fromEntries(schema.filter((s) => s.name.trim()).map((s) => [s.name.trim(), s.value])) as Record<string, (typeof FIELD_TYPES)[number]> }
      if (current) {
        return (await unwrap(api.PATCH('/v1/spaces/{space}/datasources/{key}', { params: { path: { space, key: current.key } }, body: { label, config } }))).data
      }
      const body = { key, label, type, config: type === 'webhook_push' ? { ...config, secret_hash: 'auto' } : config }
      return (await unwrap(api.POST('/v1/spaces/{space}/datasources', { params: { path: { space } }, body }))).data
    },
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: dsKeys.all(space) })
      onSaved(saved as DatasourceView & { webhook_secret?: string })
    },
  })
  const err = (field: string) => errorsAt(save.error, field)

  function submit(e: FormEvent) {
    e.preventDefault()
    save.mutate()
  }

  return (
    <form onSubmit={submit} className="flex flex-col gap-4" data-testid="datasource-form" noValidate>
      {current ? null : (
        <TextField label={t('ds.key')} hint={t('ds.keyHint')} value={key} onChange={(e) => setKey(e.target.value)} required errors={err('key')} autoComplete="off" />
      )}
      <TextField label={t('ds.label')} value={label} onChange={(e) => setLabel(e.target.value)} required errors={err('label')} />
      {current ? null : (
        <fieldset className="flex flex-col gap-1">
          <legend className="text-sm font-medium text-slate-800">{t('ds.type')}</legend>
          {(['http_json', 'webhook_push'] as const).map((ty) => (
            <label key={ty} className="flex items-start gap-2 text-sm">
              <input type="radio" name={typeName} value={ty} checked={type === ty} onChange={() => setType(ty)} className="mt-1" />
              <span>
                <span className="font-medium">{t(`ds.type.${ty}`)}</span> — {t(`ds.type.${ty}.help`)}
              </span>
            </label>
          ))}
        </fieldset>
      )}
      {type === 'http_json' ? (
        <>
          <TextField label={t('ds.url')} hint={current ? t('ds.urlMaskedHint') : t('ds.urlHint')} type="url" value={url} onChange={(e) => setUrl(e.target.value)} required errors={err('config.url')} />
          <div className="flex flex-col gap-2">
            <TextField label={t('ds.jsonPath')} hint={t('ds.jsonPathHint')} value={jsonPath} onChange={(e) => setJsonPath(e.target.value)} required errors={err('config.json_path')} spellCheck={false} />
            {current ? <PathTester space={space} dsKey={current.key} path={jsonPath} /> : <p className="text-xs text-slate-600">{t('ds.testAfterSave')}</p>}
          </div>
          <div className="flex flex-col gap-1">
            <TextField label={t('ds.cron')} hint={t('ds.cronHint')} value={cron} onChange={(e) => setCron(e.target.value)} required errors={err('config.cron')} spellCheck={false} />
            <div aria-live="polite" className="text-xs text-slate-700" data-testid="cron-runs">
              {runs.data ? (
                runs.data.runs.length ? (
                  <>
                    {t('ds.nextRuns')}
                    <ul className="ml-4 list-disc">
                      {runs.data.runs.map((r) => (
                        <li key={r}>{runInWords(r)}</li>
                      ))}
                    </ul>
                  </>
                ) : (
                  t('ds.neverRuns')
                )
              ) : runs.error ? (
                <span className="text-red-700">{errorsAt(runs.error, 'cron')?.length ? t('ds.cronInvalid') : errorText(runs.error)}</span>
              ) : null}
            </div>
          </div>
          <Rows
            legend={t('ds.headers')}
            help={t('ds.headersHelp')}
            rows={headers}
            onChange={setHeaders}
            nameLabel={t('ds.headerName')}
            value={(row, set, label) => <input aria-label={label} type="password" autoComplete="off" className={INPUT} value={row.value} onChange={(e) => set(e.target.value)} />}
            valueLabel={t('ds.headerValue')}
            addLabel={t('ds.addHeader')}
            errors={err('config.headers')}
          />
        </>
      ) : (
        <>
          <label className="flex items-center gap-2 text-sm">
            <input type="checkbox" checked={unsigned} onChange={(e) => setUnsigned(e.target.checked)} />
            {t('ds.allowUnsigned')}
          </label>
          <Rows
            legend={t('ds.schema')}
            help={t('ds.schemaHelp')}
            rows={schema}
            onChange={setSchema}
            nameLabel={t('ds.fieldName')}
            value={(row, set, label) => (
              <select aria-label={label} className={INPUT} value={row.value || 'string'} onChange={(e) => set(e.target.value)}>
                {FIELD_TYPES.map((f) => (
                  <option key={f} value={f}>
                    {f}
                  </option>
                ))}
              </select>
            )}
            valueLabel={t('ds.fieldType')}
            addLabel={t('ds.addField')}
            blank="string"
            errors={err('config.schema')}
          />
        </>
      )}
      <CatalogError error={save.error} />
      <div className="flex justify-end gap-2">
        {onCancel ? <Button onClick={onCancel}>{t('common.cancel')}</Button> : null}
        <Button tone="primary" type="submit" disabled={save.isPending}>
          {current ? t('ds.save') : t('ds.create')}
        </Button>
      </div>
    </form>
  )
}

function Rows({
  legend,
  help,
  rows,
  onChange,
  nameLabel,
  valueLabel,
  value,
  addLabel,
  blank = '',
  errors,
}: {
  legend: string
  help: string
  rows: Row[]
  onChange: (rows: Row[]) => void
  nameLabel: string
  valueLabel: string
  value: (row: Row, set: (v: string) => void, label: string) => ReactNode
  addLabel: string
  blank?: string
  errors?: string[]
}) {
  const helpId = useId()
  return (
    <fieldset className="flex flex-col gap-2" aria-describedby={helpId}>
      <legend className="text-sm font-medium text-slate-800">{legend}</legend>
      <p id={helpId} className="text-xs text-slate-600">
        {help}
      </p>
      {rows.map((row, i) => (
        <div key={i} className="flex flex-wrap items-center gap-2">
          <input
            aria-label={`${nameLabel} ${i + 1}`}
            className={INPUT}
            value={row.name}
            onChange={(e) => onChange(rows.map((r, j) => (j === i ? { ...r, name: e.target.value } : r)))}
          />
          {value(row, (v) => onChange(rows.map((r, j) => (j === i ? { ...r, value: v } : r))), `${valueLabel} ${i + 1}`)}
          <Button onClick={() => onChange(rows.filter((_, j) => j !== i))} aria-label={t('ds.removeRow', { n: formatNumber(i + 1) })}>
            {t('ds.remove')}
          </Button>
        </div>
      ))}
      <div>
        <Button onClick={() => onChange([...rows, { name: '', value: blank }])}>{addLabel}</Button>
      </div>
      <FieldErrors errors={errors} />
    </fieldset>
  )
}

/** "Test it": what the JSONPath selects from the document the last pull received (the API fetches nothing). */
function PathTester({ space, dsKey, path }: { space: string; dsKey: string; path: string }) {
  const test = useMutation({
    mutationFn: async () => (await unwrap(api.POST('/v1/spaces/{space}/datasources/{key}/test-path', { params: { path: { space, key: dsKey } }, body: { json_path: path } }))).data,
  })
  const r = test.data
  return (
    <div className="flex flex-col gap-2" data-testid="path-tester">
      <div>
        <Button onClick={() => test.mutate()} disabled={test.isPending || !path.trim()}>
          {t('ds.testPath')}
        </Button>
      </div>
      <div aria-live="polite" className="text-sm">
        {test.error ? <p className="text-red-700">{errorsAt(test.error, 'json_path') ? t('ds.pathInvalid') : errorText(test.error)}</p> : null}
        {r ? (
          r.pulled_at === null ? (
            <p>{t('ds.noPullYet')}</p>
          ) : (
            <>
              <p data-testid="path-result">{t('ds.pathResult', { matches: formatNumber(r.matches), entries: formatNumber(r.entries), when: runInWords(r.pulled_at) })}</p>
              {r.sample.length ? (
                <pre tabIndex={0} aria-label={t('ds.pathSample')} className="max-h-64 overflow-auto rounded-md bg-slate-900 p-3 text-xs text-slate-50">
                  {JSON.stringify(r.sample, null, 2)}
                </pre>
              ) : null}
            </>
          )
        ) : null}
      </div>
    </div>
  )
}
