import { useEffect, useState } from 'react'
import { ApiFailure } from '../api/client'

/** `value`, once it has stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value)
  useEffect(() => {
    const id = setTimeout(() => setV(value), ms)
    return () => clearTimeout(id)
  }, [value, ms])
  return v
}

/** The 422's messages for `field`, whatever separator the API used (`config.url`, `config/url`, `/config/url`). */
export function errorsAt(error: unknown, field: string): string[] | undefined {
  if (!(error instanceof ApiFailure) || !error.body.errors) return undefined
  const want = field.replace(/[/.]/g, '.')
  const out: string[] = []
  for (const [k, msgs] of Object.entries(error.body.errors)) if (k.replace(/^\//, '').replace(/[/.]/g, '.') === want) out.push(...msgs)
  return out.length ? out : undefined
}

/** Copies text to the clipboard; false where the browser refuses. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    return false
  }
}
