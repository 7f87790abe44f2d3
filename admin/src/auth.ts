/**
 * The signed-in user's token: in memory, mirrored to sessionStorage so a reload keeps the session (never
 * localStorage: the token dies with the tab). A token minted from the browser's admin session (admin-session.ts)
 * carries its expiry, so it is renewed in time. Anything that must react to sign-in/out subscribes.
 */
const KEY = 'content-service.token'
const EXPIRES_KEY = 'content-service.token-expires'

let token: string | null = null
let expiresAt: number | null = null
readStored()
const listeners = new Set<() => void>()

function readStored() {
  try {
    const stored = sessionStorage.getItem(KEY)
    const expires = Number(sessionStorage.getItem(EXPIRES_KEY) ?? '') || null
    // A minted token that ran out is of no use: the tab trades the session again instead.
    if (stored && (expires === null || expires > Date.now())) {
      token = stored
      expiresAt = expires
    }
  } catch {
    // No storage: nothing remembered.
  }
}

export function getToken(): string | null {
  return token
}

/** When the token runs out (epoch ms), for a token minted from the admin session; null for a sign-in's own token. */
export function getTokenExpiry(): number | null {
  return token ? expiresAt : null
}

export function setToken(next: string | null, expires?: string | null) {
  token = next
  expiresAt = next && expires ? Date.parse(expires) || null : null
  try {
    if (next) sessionStorage.setItem(KEY, next)
    else sessionStorage.removeItem(KEY)
    if (expiresAt) sessionStorage.setItem(EXPIRES_KEY, String(expiresAt))
    else sessionStorage.removeItem(EXPIRES_KEY)
  } catch {
    // Storage refused (private mode): the token lives in memory for this page.
  }
  for (const l of listeners) l()
}

export function onTokenChange(listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}
