/**
 * The sign-in shared by every tab of this browser (admin/README.md "Signing in across tabs"). Signing in opens an
 * admin session: the server keeps it in an HttpOnly cookie this script can never read, scoped to
 * /v1/auth/admin-session. A tab without a token trades it (with `X-Admin-Session: 1`) for a bearer token of 15
 * minutes, renewed a minute before it runs out; every API call stays bearer-only.
 */
import { api, notifyUnauthorized } from './api/client'
import { getToken, getTokenExpiry, onTokenChange, setToken } from './auth'

const HEADER = { 'X-Admin-Session': '1' } as const
/** Renew this long before the token runs out. */
const RENEW_EARLY_MS = 60_000

let renewal: ReturnType<typeof setTimeout> | undefined
let inFlight: Promise<boolean> | null = null

/**
 * Trades the browser's admin session for a token for this tab. True when it did; false when there is no session
 * (never signed in here, signed out, expired): then the tab signs in.
 */
export function resumeAdminSession(): Promise<boolean> {
  inFlight ??= (async () => {
    try {
      const { data, response } = await api.POST('/v1/auth/admin-session/token', { headers: HEADER })
      if (!response.ok || !data) return false
      setToken(data.data.token, data.data.expires_at)
      return true
    } catch {
      return false
    } finally {
      inFlight = null
    }
  })()
  return inFlight
}

/** After a sign-in with the password (login, sign-up, an invitation): keep the token here and open the session for the other tabs. */
export async function signedIn(token: string): Promise<void> {
  setToken(token)
  // The sign-in stands without it (this tab has its token); other tabs then sign in on their own.
  await api.POST('/v1/auth/admin-session', { headers: HEADER }).catch(() => {})
}

/** Signs this browser out: the token (and with it the session it opened or came from), then the cookie of every tab. */
export async function signOut(): Promise<void> {
  await api.POST('/v1/auth/logout').catch(() => {})
  await endAdminSession()
  setToken(null)
}

/** Ends the browser's admin session and clears its cookie (after sign-out everywhere the row is gone already). */
export async function endAdminSession(): Promise<void> {
  await api.DELETE('/v1/auth/admin-session', { headers: HEADER }).catch(() => {})
}

/** Keeps a token minted from the session alive: renew before it runs out; a session that ended signs the tab out. */
function schedule() {
  clearTimeout(renewal)
  const expires = getTokenExpiry()
  if (!getToken() || expires === null) return
  renewal = setTimeout(
    async () => {
      if (await resumeAdminSession()) return
      // The session ended (sign-out in another tab, expiry): this tab's token is revoked or about to run out.
      notifyUnauthorized()
    },
    Math.max(1_000, expires - Date.now() - RENEW_EARLY_MS),
  )
}

onTokenChange(schedule)
schedule()
// A sleeping tab's timer may fire late: look again when the tab comes back.
if (typeof document !== 'undefined') {
  document.addEventListener('visibilitychange', () => {
    const expires = getTokenExpiry()
    if (document.visibilityState === 'visible' && getToken() && expires !== null && expires - Date.now() < RENEW_EARLY_MS) void resumeAdminSession()
  })
}
