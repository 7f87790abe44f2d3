import type { UseQueryResult } from '@tanstack/react-query'
import { type FormEvent, type ReactNode, type SelectHTMLAttributes, useId } from 'react'
import { Button, CatalogErrorRetry, Skeleton } from './ui'

/**
 * The scaffolding of a settings-type screen (Account, Space settings): its `<h1>`, a skeleton while its data loads, a
 * failed load with Try again, then its sections once the data is there.
 */
export function SettingsPage<T>({
  title,
  query,
  className = 'flex max-w-3xl flex-col gap-6',
  lines = 4,
  children,
}: {
  title: string
  query: UseQueryResult<T>
  className?: string
  lines?: number
  children: (data: T) => ReactNode
}) {
  return (
    <div className={className}>
      <h1 className="text-2xl font-semibold">{title}</h1>
      {query.isPending ? <Skeleton lines={lines} /> : null}
      {query.isError ? <CatalogErrorRetry error={query.error} onRetry={() => query.refetch()} /> : null}
      {query.data ? children(query.data) : null}
    </div>
  )
}

/** One section of a settings screen: a card with its `<h2>`, labelled by it. */
export function SettingsSection({ title, children }: { title: string; children: ReactNode }) {
  const id = useId()
  return (
    <section aria-labelledby={id} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200">
      <h2 id={id} className="text-lg font-semibold">
        {title}
      </h2>
      {children}
    </section>
  )
}

/**
 * A settings form: its fields, a failure not shown at a field (`error`: pass it only when no field holds it) with
 * its sentence, and the submit button (disabled while `pending` or `disabled`).
 */
export function SettingsForm({
  onSubmit,
  error,
  submit,
  pending,
  disabled = false,
  children,
}: {
  onSubmit: () => void
  error: unknown
  submit: string
  pending: boolean
  disabled?: boolean
  children: ReactNode
}) {
  const send = (e: FormEvent) => {
    e.preventDefault()
    onSubmit()
  }
  return (
    <form onSubmit={send} className="flex flex-col gap-3" noValidate>
      {children}
      {error ? <CatalogErrorRetry error={error} /> : null}
      <div>
        <Button tone="primary" type="submit" disabled={pending || disabled}>
          {submit}
        </Button>
      </div>
    </form>
  )
}

/** A labelled `<select>` in a settings form (its options as children). */
export function SelectField({ label, children, ...props }: SelectHTMLAttributes<HTMLSelectElement> & { label: string }) {
  const id = useId()
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium text-slate-800">
        {label}
      </label>
      <select id={id} className="rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm" {...props}>
        {children}
      </select>
    </div>
  )
}
