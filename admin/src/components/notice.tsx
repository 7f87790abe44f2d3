/** The outcome of a finished action, read out by screen readers (a polite live region). */
export function Notice({ text }: { text: string | null }) {
  return (
    <p role="status" className={text ? 'rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-900 ring-1 ring-emerald-200' : 'sr-only'}>
      {text ?? ''}
    </p>
  )
}

