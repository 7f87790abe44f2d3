import { Elysia } from 'elysia'
import { TOKEN_PAGE_RESPONSE, tokenPage } from '../../kernel/link-page'

/**
 * `GET /confirm-sign-up/{token}`: the page a sign-up confirmation mail links to. Opening it changes nothing (mail
 * scanners open links): its button posts the token from the address bar to `/v1/auth/register/confirm` (relative,
 * so a PUBLIC_URL with a path prefix works), which makes the account. Nothing on this page reads the database. The
 * token is in the URL, so the page is never cached and sends no Referer.
 */
const SCRIPT = `
const form = document.getElementById('f'), out = document.getElementById('out'), btn = document.getElementById('go'), done = document.getElementById('done')
form.addEventListener('submit', async (e) => {
  e.preventDefault()
  const token = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() || '')
  btn.disabled = true
  out.textContent = 'Confirming...'
  try {
    const res = await fetch('../v1/auth/register/confirm', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token }) })
    const body = await res.json().catch(() => ({}))
    if (res.ok) {
      form.hidden = true
      const warnings = (body.data && body.data.warnings) || []
      out.textContent = 'Your address is confirmed and your account is ready.' + (warnings.length ? ' ' + warnings.join(' ') : '')
      done.hidden = false
    } else { btn.disabled = false; out.textContent = body.message || 'Something went wrong.' }
  } catch { btn.disabled = false; out.textContent = 'The service could not be reached. Try again.' }
})
`
const PAGE = tokenPage({
  title: 'Confirm your address',
  body: `<form id="f"><p>Confirm this address to create your account.</p><button id="go" type="submit">Confirm my address</button></form>
<p id="out" role="status"></p>
<p id="done" hidden><a href="../admin/">Sign in</a></p>`,
  script: SCRIPT,
})

export function confirmPageRoutes() {
  return new Elysia({ tags: ['Auth'] }).get('/confirm-sign-up/:token', PAGE, {
    detail: {
      summary: 'The page a sign-up confirmation mail links to',
      description: 'Opening it changes nothing; its button posts the token of its URL to `POST /v1/auth/register/confirm`, which makes the account.',
      responses: { 200: TOKEN_PAGE_RESPONSE },
    },
  })
}
