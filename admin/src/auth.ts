/**
 * The signed-in user's token: in memory, mirrored to sessionStorage so a reload keeps the session (never
 * localStorage: the token dies with the tab). Anything that must react to sign-in/out subscribes.
 */
const KEY = 'content-service.token'

let token: string | null = readStored()
const listeners = new Set<() => void>()

function readStored(): string | null {
  try {
    return sessionStorage.getItem(KEY)
  } catch {
    return null
  }
}

export function getToken(): string | null {
  return token
}

export function setToken(next: string | null) {
  token = next
  try {
    if (next) sessionStorage.setItem(KEY, next)
    else sessionStorage.removeItem(KEY)
  } catch {
    // Storage refused (private mode): the token lives in memory for this page.
  }
  for (const l of listeners) l()
}

export function onTokenChange(listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}
