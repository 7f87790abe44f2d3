import { Elysia } from 'elysia'

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
const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem}button{margin-top:1rem;padding:.5rem 1rem;font:inherit}'

const sha256 = (s: string) => `'sha256-${new Bun.CryptoHasher('sha256').update(s).digest('base64')}'`

const HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>Confirm your address</title><style>${STYLE}</style></head>
<body><h1>Confirm your address</h1>
<form id="f"><p>Confirm this address to create your account.</p><button id="go" type="submit">Confirm my address</button></form>
<p id="out" role="status"></p>
<p id="done" hidden><a href="../admin/">Sign in</a></p>
<script>${SCRIPT}</script></body></html>`

const HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': `default-src 'none'; script-src ${sha256(SCRIPT)}; style-src ${sha256(STYLE)}; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
}

export function confirmPageRoutes() {
  return new Elysia({ tags: ['Auth'] }).get('/confirm-sign-up/:token', () => new Response(HTML, { headers: HEADERS }), {
    detail: {
      summary: 'The page a sign-up confirmation mail links to',
      description: 'Opening it changes nothing; its button posts the token of its URL to `POST /v1/auth/register/confirm`, which makes the account.',
      responses: { 200: { description: 'The page', content: { 'text/html': { schema: { type: 'string' as const } } } } },
    },
  })
}
