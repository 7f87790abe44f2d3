import { type ReactNode, useId, useState } from 'react'
import { t } from '../i18n'
import { Pager, type PagerText } from './pager'
import { Button } from './ui'

const INPUT = 'rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm'

/** A select over a list's values, "All" (the empty value) first. */
export type ListFilter = { label: string; value: string; options: readonly string[]; optionText: (option: string) => string; onChange: (value: string) => void }

/**
 * Above a paged list: its filter selects, a search box (what is typed is searched on Enter or the button), more
 * controls of the screen's own (`children`: a checkbox, a refresh button) and the CSV export at the end of the row.
 * Each part is there when given.
 */
export function ListToolbar({
  filters = [],
  search,
  exportCsv,
  children,
}: {
  filters?: ListFilter[]
  search?: { label: string; submit: string; onSearch: (q: string) => void }
  exportCsv?: { label: string; onExport: () => void; busy: boolean }
  children?: ReactNode
}) {
  return (
    <div className="flex flex-wrap items-end gap-3">
      {filters.map((f) => (
        <FilterSelect key={f.label} filter={f} />
      ))}
      {search ? <SearchBox {...search} /> : null}
      {children}
      {exportCsv ? (
        <Button className="ml-auto" onClick={exportCsv.onExport} disabled={exportCsv.busy}>
          {exportCsv.label}
        </Button>
      ) : null}
    </div>
  )
}

function FilterSelect({ filter: f }: { filter: ListFilter }) {
  const id = useId()
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium text-slate-800">
        {f.label}
      </label>
      <select id={id} value={f.value} onChange={(e) => f.onChange(e.target.value)} className={INPUT}>
        <option value="">{t('resource.all')}</option>
        {f.options.map((o) => (
          <option key={o} value={o}>
            {f.optionText(o)}
          </option>
        ))}
      </select>
    </div>
  )
}

function SearchBox({ label, submit, onSearch }: { label: string; submit: string; onSearch: (q: string) => void }) {
  const id = useId()
  const [typed, setTyped] = useState('')
  return (
    <form
      role="search"
      className="flex items-end gap-2"
      onSubmit={(e) => {
        e.preventDefault()
        onSearch(typed)
      }}
    >
      <div className="flex flex-col gap-1">
        <label htmlFor={id} className="text-sm font-medium text-slate-800">
          {label}
        </label>
        <input id={id} type="search" value={typed} onChange={(e) => setTyped(e.target.value)} className={INPUT} />
      </div>
      <Button type="submit">{submit}</Button>
    </form>
  )
}

const listPagerText = (): PagerText => ({
  nav: t('resource.paging'),
  previous: t('resource.previous'),
  next: t('resource.next'),
  status: (page, pages) => t('resource.page', { page, pages }),
})

/** Below a paged list: the shared Pager with the lists' words ("Page 2 of 5"), nothing when it fits on one page. */
export function ListPager(props: { page: number; perPage: number; total: number; onPage: (page: number) => void }) {
  return <Pager {...props} text={listPagerText()} live={false} />
}
