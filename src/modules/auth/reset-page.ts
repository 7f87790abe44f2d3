import { Elysia } from 'elysia'
import { TOKEN_PAGE_RESPONSE, tokenPage } from '../../kernel/link-page'

/**
 * `GET /reset-password/{token}`: the page the reset mail links to, so the link works without an admin app. A static
 * form; its script posts the token from the address bar and the new password to `/v1/auth/password-reset/confirm`
 * (relative, so a PUBLIC_URL with a path prefix works). Nothing on this page reads the database: the confirm
 * endpoint decides. The token is in the URL, so the page is never cached and sends no Referer.
 */
const SCRIPT = `
const form = document.getElementById('f'), out = document.getElementById('out'), btn = document.getElementById('go')
form.addEventListener('submit', async (e) => {
  e.preventDefault()
  const token = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() || '')
  const p1 = form.elements.p1.value, p2 = form.elements.p2.value
  if (p1 !== p2) { out.textContent = 'The two passwords differ.'; return }
  btn.disabled = true
  out.textContent = 'Saving...'
  try {
    const res = await fetch('../v1/auth/password-reset/confirm', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token, new_password: p1 }),
    })
    const body = await res.json().catch(() => ({}))
    if (res.ok) { form.hidden = true; out.textContent = 'Your password is changed. Every session was signed out: log in with the new password.' }
    else { btn.disabled = false; out.textContent = (body.errors && body.errors.new_password ? 'The new password ' + body.errors.new_password.join(', ') : body.message) || 'Something went wrong.' }
  } catch { btn.disabled = false; out.textContent = 'The service could not be reached. Try again.' }
})
`
const PAGE = tokenPage({
  title: 'Choose a new password',
  body: `<form id="f"><label>New password (at least 8 characters)<input name="p1" type="password" minlength="8" maxlength="1024" autocomplete="new-password" required></label>
<label>The same again<input name="p2" type="password" minlength="8" maxlength="1024" autocomplete="new-password" required></label>
<button id="go" type="submit">Set the new password</button></form>
<p id="out" role="status"></p>`,
  script: SCRIPT,
})

export function resetPageRoutes() {
  return new Elysia({ tags: ['Auth'] }).get('/reset-password/:token', PAGE, {
    detail: {
      summary: 'The page a password-reset mail links to',
      description: 'A form that posts the token of its URL and the new password to `POST /v1/auth/password-reset/confirm`.',
      responses: { 200: TOKEN_PAGE_RESPONSE },
    },
  })
}
