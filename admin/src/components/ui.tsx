import { type ButtonHTMLAttributes, type InputHTMLAttributes, type ReactNode, useEffect, useId, useRef } from 'react'
import { errorText, t } from '../i18n'

type Tone = 'primary' | 'secondary' | 'danger'
const TONES: Record<Tone, string> = {
  primary: 'bg-indigo-700 text-white hover:bg-indigo-800 disabled:bg-indigo-300',
  secondary: 'bg-white text-slate-800 ring-1 ring-slate-300 hover:bg-slate-100 disabled:text-slate-400',
  danger: 'bg-red-700 text-white hover:bg-red-800 disabled:bg-red-300',
}

export function Button({ tone = 'secondary', className = '', ...props }: ButtonHTMLAttributes<HTMLButtonElement> & { tone?: Tone }) {
  return (
    <button
      type="button"
      {...props}
      className={`inline-flex items-center gap-1 rounded-md px-3 py-1.5 text-sm font-medium disabled:cursor-not-allowed ${TONES[tone]} ${className}`}
    />
  )
}

/** A labelled input with its error messages under it (aria-describedby, aria-invalid). */
export function TextField({
  label,
  errors,
  hint,
  ...props
}: InputHTMLAttributes<HTMLInputElement> & { label: string; errors?: string[]; hint?: string }) {
  const id = useId()
  const describedBy = errors?.length ? `${id}-err` : hint ? `${id}-hint` : undefined
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium text-slate-800">
        {label}
      </label>
      <input
        id={id}
        {...props}
        aria-invalid={errors?.length ? true : undefined}
        aria-describedby={describedBy}
        className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm aria-invalid:border-red-600"
      />
      {hint && !errors?.length ? (
        <p id={`${id}-hint`} className="text-xs text-slate-600">
          {hint}
        </p>
      ) : null}
      <FieldErrors id={`${id}-err`} errors={errors} />
    </div>
  )
}

export function FieldErrors({ id, errors }: { id?: string; errors?: string[] }) {
  if (!errors?.length) return null
  return (
    // The alert role on a wrapper: on the list itself it would take the list's semantics away from its items.
    <div id={id} role="alert">
      <ul className="text-xs text-red-700">
        {errors.map((e) => (
          <li key={e}>{e}</li>
        ))}
      </ul>
    </div>
  )
}

export type StoryState = 'draft' | 'published' | 'changed' | 'archived'
const BADGES: Record<StoryState, string> = {
  draft: 'bg-slate-200 text-slate-800',
  published: 'bg-emerald-100 text-emerald-900',
  changed: 'bg-amber-100 text-amber-900',
  archived: 'bg-zinc-300 text-zinc-800',
}
const BADGE_TEXT = { draft: 'status.draft', published: 'status.published', changed: 'status.changed', archived: 'status.archived' } as const

export function storyState(s: { status: string; has_unpublished_changes: boolean }): StoryState {
  if (s.status === 'archived') return 'archived'
  if (s.status === 'published') return s.has_unpublished_changes ? 'changed' : 'published'
  return 'draft'
}

export function StatusBadge({ state }: { state: StoryState }) {
  return <span className={`rounded px-1.5 py-0.5 text-xs font-medium ${BADGES[state]}`}>{t(BADGE_TEXT[state])}</span>
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="rounded-lg border border-dashed border-slate-300 bg-white p-8 text-center">
      <h2 className="text-base font-semibold text-slate-900">{title}</h2>
      <div className="mt-2 text-sm text-slate-700">{children}</div>
    </div>
  )
}

/** A failure in the UI's language (the API's error code through the catalog, else the server's message). */
export function ErrorNotice({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  return <CatalogErrorRetry error={error} onRetry={onRetry} />
}

/** A failure as a sentence in the UI's language, with Try again when the load can be repeated. */
export function CatalogErrorRetry({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null
  return (
    <div role="alert" className="flex flex-wrap items-center gap-3 rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 ring-1 ring-red-200">
      <span className="flex-1">{errorText(error)}</span>
      {onRetry ? (
        <button type="button" onClick={onRetry} className="rounded-md bg-white px-2 py-1 font-medium text-red-900 ring-1 ring-red-300 hover:bg-red-100">
          {t('common.retry')}
        </button>
      ) : null}
    </div>
  )
}

/** Grey bars where a screen's data will be: the layout holds while it loads (announced as loading). */
export function Skeleton({ lines = 3 }: { lines?: number }) {
  return (
    <div role="status" aria-label={t('common.loading')} className="flex animate-pulse flex-col gap-2" data-testid="skeleton">
      {Array.from({ length: lines }, (_, i) => (
        <div key={i} className="h-4 rounded bg-slate-200" style={{ width: `${90 - ((i * 17) % 40)}%` }} />
      ))}
    </div>
  )
}

export function Loading({ what = t('common.loading') }: { what?: string }) {
  return (
    <p className="p-4 text-sm text-slate-600" aria-live="polite">
      {what}…
    </p>
  )
}

/**
 * A modal dialog on the platform's <dialog> (focus trap, Escape, inert page, top layer): no dependency, and the
 * browser's own accessibility semantics.
 */
export function Dialog({ open, title, onClose, children }: { open: boolean; title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  useEffect(() => {
    const d = ref.current
    if (!d) return
    if (open && !d.open) d.showModal()
    if (!open && d.open) d.close()
  }, [open])
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onClose={onClose}
      className="m-auto w-full max-w-md rounded-lg p-0 shadow-xl backdrop:bg-slate-900/40"
    >
      {open ? (
        <div className="flex flex-col gap-4 p-5">
          <h2 id={titleId} className="text-lg font-semibold">
            {title}
          </h2>
          {children}
        </div>
      ) : null}
    </dialog>
  )
}
