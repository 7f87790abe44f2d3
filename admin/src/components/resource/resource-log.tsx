import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import type { ManifestResource } from '../../api/manifest-types'
import { atLeast, type Role } from '../../api/roles'
import { t } from '../../i18n'
import { CatalogError } from '../catalog-error'
import { Button, Loading } from '../ui'
import { callOperation, type Row, tk, valueText } from './call'
import { Cell } from './cells'
import { queryKeys } from '../../api/keys'

const SELECT = 'rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm'

/** A row's log (webhook deliveries, plugin calls): filters from the query's enums, entries newest first, their actions. */
export function ResourceLog({
  space,
  resource,
  row,
  role,
  onNotice,
}: {
  space: string
  resource: ManifestResource
  row: Row
  role: Role | undefined
  onNotice: (text: string) => void
}) {
  const log = resource.log!
  const headingId = useId()
  const queryClient = useQueryClient()
  const item = { space, [resource.itemParam]: String(row[resource.itemKey]) }
  const [filters, setFilters] = useState<Record<string, string>>({})
  const key = queryKeys.resourceLog(space, log.path, item, filters)
  const entries = useQuery({
    queryKey: key,
    queryFn: async () => (await callOperation<{ data: Row[] }>(log, item, { query: { limit: 100, ...filters } })).data,
  })
  const act = useMutation({
    mutationFn: ({ action, entry }: { action: ManifestResource['logActions'][number]; entry: Row }) =>
      callOperation(action, { ...item, ...Object.fromEntries(Object.entries(action.params).map(([p, k]) => [p, String(entry[k])])) }),
    onSuccess: async (_d, { action }) => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.resource(space, log.path) })
      onNotice(t('resource.done', { action: tk(action.label) }))
    },
  })
  const actions = resource.logActions.filter((a) => atLeast(role, a.minRole))
  const name = String(row[resource.name] ?? '')
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200" data-log={name}>
      <div className="flex flex-wrap items-end gap-3">
        <h2 id={headingId} className="mr-auto text-base font-semibold">
          {tk(log.label)}: {name}
        </h2>
        {log.filters.map((f) => (
          <LogFilter key={f.param} label={tk(f.label)} options={f.options} value={filters[f.param] ?? ''} onChange={(v) => setFilters((cur) => {
            const next = { ...cur }
            if (v) next[f.param] = v
            else delete next[f.param]
            return next
          })} />
        ))}
        <Button onClick={() => entries.refetch()} disabled={entries.isFetching}>
          {t('resource.refresh')}
        </Button>
      </div>
      {entries.isPending ? <Loading what={t('common.loading')} /> : null}
      <CatalogError error={entries.error ?? act.error} />
      {entries.data && entries.data.length === 0 ? <p className="text-sm text-slate-700">{tk(log.empty)}</p> : null}
      {entries.data && entries.data.length > 0 ? (
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{tk(log.label)}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                {log.columns.map((c) => (
                  <th key={c.key} scope="col" className="px-3 py-2 whitespace-nowrap">
                    {tk(c.label)}
                  </th>
                ))}
                {actions.length ? (
                  <th scope="col" className="px-3 py-2">
                    <span className="sr-only">{t('resource.actions')}</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {entries.data.map((entry, i) => (
                <tr key={String(entry.id ?? i)} className="border-t border-slate-200 align-top" data-entry={String(entry.outcome ?? '')}>
                  {log.columns.map((c) => (
                    <td key={c.key} className="px-3 py-2">
                      <Cell column={c} row={entry} />
                    </td>
                  ))}
                  {actions.length ? (
                    <td className="px-3 py-2 text-right whitespace-nowrap">
                      {actions.map((a) => (
                        <Button key={a.path} disabled={act.isPending} onClick={() => act.mutate({ action: a, entry })}>
                          {tk(a.label)}
                        </Button>
                      ))}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  )
}

function LogFilter({ label, options, value, onChange }: { label: string; options: readonly string[]; value: string; onChange: (v: string) => void }) {
  const id = useId()
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium text-slate-800">
        {label}
      </label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)} className={SELECT}>
        <option value="">{t('resource.all')}</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {valueText(o)}
          </option>
        ))}
      </select>
    </div>
  )
}
