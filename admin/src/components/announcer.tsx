import { useSyncExternalStore } from 'react'

/**
 * One polite live region for the editor's announcements (a block moved, duplicated, removed): screen readers read
 * the message; a repeated message is re-announced (the region is emptied first).
 */
let message = ''
const listeners = new Set<() => void>()
const emit = () => {
  for (const l of listeners) l()
}

export function announce(text: string) {
  message = ''
  emit()
  // The next frame: a live region announces a change of its content, so the same text twice is read twice.
  requestAnimationFrame(() => {
    message = text
    emit()
  })
}

export function Announcer() {
  const text = useSyncExternalStore(
    (l) => {
      listeners.add(l)
      return () => listeners.delete(l)
    },
    () => message,
  )
  return (
    <div role="status" aria-live="polite" aria-atomic="true" data-testid="announcer" className="sr-only">
      {text}
    </div>
  )
}
