import { Elysia } from 'elysia'
import { TOKEN_PAGE_RESPONSE, tokenPage } from '../../kernel/link-page'

/**
 * `GET /pitch-demo/{token}`: the page a pitch demo mail links to. Opening it changes nothing (mail scanners open
 * links): its form posts the token from the address bar and the chosen password to `/v1/pitch/claim` (relative, so a
 * PUBLIC_URL with a path prefix works), which makes the demo account. Nothing on this page reads the database. The
 * token is in the URL, so the page is never cached and sends no Referer.
 */
const SCRIPT = `
const form = document.getElementById('f'), out = document.getElementById('out'), btn = document.getElementById('go'), done = document.getElementById('done')
form.addEventListener('submit', async (e) => {
  e.preventDefault()
  const token = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() || '')
  const p1 = form.elements.p1.value, p2 = form.elements.p2.value
  if (p1 !== p2) { out.textContent = 'The two passwords differ.'; return }
  btn.disabled = true
  out.textContent = 'Starting your demo...'
  try {
    const res = await fetch('../v1/pitch/claim', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token, password: p1 }) })
    const body = await res.json().catch(() => ({}))
    if (res.ok) {
      form.hidden = true
      const d = body.data || {}
      out.textContent = 'Your demo is ready: sign in with ' + (d.user ? d.user.email : 'your address') + ' and this password.' + ((d.warnings || []).length ? ' ' + d.warnings.join(' ') : '')
      done.hidden = false
    } else { btn.disabled = false; out.textContent = (body.errors && body.errors.password ? 'The password ' + body.errors.password.join(', ') : body.message) || 'Something went wrong.' }
  } catch { btn.disabled = false; out.textContent = 'The service could not be reached. Try again.' }
})
`
const PAGE = tokenPage({
  title: 'Start your demo',
  body: `<form id="f"><label>Choose a password (at least 8 characters)<input name="p1" type="password" minlength="8" maxlength="1024" autocomplete="new-password" required></label>
<label>The same again<input name="p2" type="password" minlength="8" maxlength="1024" autocomplete="new-password" required></label>
<button id="go" type="submit">Start the demo</button></form>
<p id="out" role="status"></p>
<p id="done" hidden><a href="../admin/">Sign in</a></p>`,
  script: SCRIPT,
})

export function pitchPageRoutes() {
  return new Elysia({ tags: ['Onboarding'] }).get('/pitch-demo/:token', PAGE, {
    detail: {
      summary: 'The page a pitch demo mail links to',
      description: 'Opening it changes nothing; its form posts the token of its URL and a chosen password to `POST /v1/pitch/claim`, which makes the demo.',
      responses: { 200: TOKEN_PAGE_RESPONSE },
    },
  })
}
