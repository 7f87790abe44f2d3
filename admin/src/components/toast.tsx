import { useSyncExternalStore } from 'react'
import { t } from '../i18n'

/**
 * Toasts: a short line after a finished action ("Saved.", "Invitation sent."), read out by screen readers (a polite
 * live region that is always in the page) and gone after a few seconds or on Dismiss. `toast(text)` from anywhere.
 */
interface Toast {
  id: number
  text: string
  tone: 'success' | 'error'
}
let toasts: Toast[] = []
let next = 1
const listeners = new Set<() => void>()
const emit = () => {
  for (const l of listeners) l()
}

export function dismissToast(id: number) {
  toasts = toasts.filter((x) => x.id !== id)
  emit()
}

export function toast(text: string, tone: Toast['tone'] = 'success') {
  const id = next++
  toasts = [...toasts.slice(-3), { id, text, tone }]
  emit()
  setTimeout(() => dismissToast(id), tone === 'error' ? 10_000 : 6_000)
}

const subscribe = (l: () => void) => {
  listeners.add(l)
  return () => listeners.delete(l)
}

/** The one place toasts show (the shell mounts it). */
export function Toaster() {
  const list = useSyncExternalStore(subscribe, () => toasts)
  return (
    <section aria-label={t('toast.region')} className="pointer-events-none fixed right-3 bottom-3 z-40 flex w-[min(24rem,calc(100vw-1.5rem))] flex-col gap-2">
      <div role="status" aria-live="polite" className="flex flex-col gap-2">
        {list.map((x) => (
          <div
            key={x.id}
            data-testid="toast"
            className={`pointer-events-auto flex items-start justify-between gap-3 rounded-md px-3 py-2 text-sm shadow-lg ring-1 ${
              x.tone === 'error' ? 'bg-red-50 text-red-900 ring-red-200' : 'bg-emerald-50 text-emerald-900 ring-emerald-200'
            }`}
          >
            <span>{x.text}</span>
            <button type="button" onClick={() => dismissToast(x.id)} className="text-xs font-medium underline" aria-label={t('toast.dismiss')}>
              ×
            </button>
          </div>
        ))}
      </div>
    </section>
  )
}
