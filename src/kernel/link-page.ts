/**
 * The small pages behind mailed links that change something (confirm a subscription, unsubscribe, cancel an event
 * registration). Mail scanners, link previews and security gateways fetch every link of a mail; so the link's GET
 * changes nothing and answers a page whose button POSTs to the same address, and the POST does the work. The page
 * has no script: its Content-Security-Policy allows its own style and a form posting to this origin (plus the
 * origin the POST redirects to, when it does: browsers check form-action on the redirect too), nothing else.
 */

import { readBodyCapped } from './http'

/** The hidden field the pages' form sends, so its POST is answered with a page (or a redirect) instead of JSON. */
export const PAGE_FIELD = 'via'
const PAGE_VALUE = 'page'
/** A POST body read to find PAGE_FIELD: the page's form sends a few bytes; anything longer is not the page. */
const PAGE_BODY_LIMIT = 1024

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:30rem;margin:4rem auto;padding:0 1rem}h1{font-size:1.4rem}button{margin-top:1rem;padding:.5rem 1rem;font:inherit}'
const STYLE_HASH = `'sha256-${new Bun.CryptoHasher('sha256').update(STYLE).digest('base64')}'`

export interface LinkPage {
  title: string
  /** Paragraphs, as text (escaped here). */
  paragraphs: string[]
  /** The button's label, when the action can still be taken; without it the page only informs. */
  button?: string
  /** Default 200. */
  status?: number
  /** Origins the POST may redirect to (a Space's newsletter_redirect_url), added to the CSP's form-action. */
  formTargets?: string[]
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/** An http(s) URL's origin as CSP source text, or null (anything else is left out of the policy). */
function cspOrigin(url: string): string | null {
  try {
    const u = new URL(url)
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.origin : null
  } catch {
    return null
  }
}

/** The page as a Response: HTML, never cached or framed, no Referer (the URL holds a token), strict CSP. */
export function linkPageResponse(page: LinkPage): Response {
  const form = page.button
    ? `<form method="post"><input type="hidden" name="${PAGE_FIELD}" value="${PAGE_VALUE}"><button type="submit">${escapeHtml(page.button)}</button></form>`
    : ''
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(page.title)}</title><style>${STYLE}</style></head>
<body><h1>${escapeHtml(page.title)}</h1>
${page.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n')}
${form}</body></html>`
  const targets = (page.formTargets ?? []).map(cspOrigin).filter((o): o is string => o !== null)
  return new Response(html, {
    status: page.status ?? 200,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Content-Security-Policy': `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self'${targets.map((o) => ` ${o}`).join('')}; frame-ancestors 'none'; base-uri 'none'`,
    },
  })
}

/**
 * Whether a POST comes from a link page's form: an `application/x-www-form-urlencoded` body of at most 1 KiB with
 * `via=page`. Anything else (RFC 8058 one-click, JSON, no body) is an API call. Reads at most 1 KiB, never throws.
 */
export async function postedFromPage(request: Request): Promise<boolean> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded' || !request.body) return false
  const body = await readBodyCapped(request, PAGE_BODY_LIMIT).catch(() => null)
  if (!body) return false
  const text = new TextDecoder('utf-8', { fatal: false }).decode(body)
  return new URLSearchParams(text).get(PAGE_FIELD) === PAGE_VALUE
}

const ONE_CLICK_FIELD = { type: 'string' as const, enum: ['One-Click'], description: 'RFC 8058 one-click (unsubscribe): answered with JSON' }

/** The request body types the POST behind a link page takes (its form; RFC 8058 one-click sends either). */
export const LINK_POST_BODY = {
  content: {
    'application/x-www-form-urlencoded': {
      schema: {
        type: 'object' as const,
        properties: {
          [PAGE_FIELD]: { type: 'string' as const, enum: [PAGE_VALUE], description: 'Sent by the link page’s form: the answer is a page (or a redirect), not JSON' },
          'List-Unsubscribe': ONE_CLICK_FIELD,
        },
      },
    },
    'multipart/form-data': { schema: { type: 'object' as const, properties: { 'List-Unsubscribe': ONE_CLICK_FIELD } } },
  },
}

/** The OpenAPI answer of a link page's GET. */
export const LINK_PAGE_RESPONSE = {
  description: 'A page (HTML, no script) saying what the link does, with a button that POSTs to the same address',
  content: { 'text/html': { schema: { type: 'string' as const } } },
}

/**
 * The pages behind mailed links that carry a token and need a form the server cannot post by itself (confirm a
 * sign-up, choose a new password, claim a demo): a static page whose one inline script reads the token from the
 * address bar and POSTs JSON to a `/v1/...` endpoint, relative to the page so a PUBLIC_URL with a path prefix works.
 * Opening the page changes nothing and reads no database; the endpoint decides. The CSP allows exactly that script
 * and style by hash, fetches to this origin, and nothing else; the URL holds a token, so no cache and no Referer.
 */
export interface TokenPage {
  title: string
  /** The page's body below its heading, as trusted HTML written in code (never user input). */
  body: string
  /** The page's script, as trusted JS written in code. */
  script: string
}

const TOKEN_PAGE_STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem}label{display:block;margin:.75rem 0}input{display:block;width:100%;padding:.4rem;font:inherit}button{margin-top:1rem;padding:.5rem 1rem;font:inherit}'
const cspHash = (s: string) => `'sha256-${new Bun.CryptoHasher('sha256').update(s).digest('base64')}'`

/** Builds the page once; the returned function answers it (a fresh Response per request). */
export function tokenPage(page: TokenPage): () => Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(page.title)}</title><style>${TOKEN_PAGE_STYLE}</style></head>
<body><h1>${escapeHtml(page.title)}</h1>
${page.body}
<script>${page.script}</script></body></html>`
  const headers = {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': `default-src 'none'; script-src ${cspHash(page.script)}; style-src ${cspHash(TOKEN_PAGE_STYLE)}; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
  }
  return () => new Response(html, { headers })
}

/** The OpenAPI answer of a token page's GET. */
export const TOKEN_PAGE_RESPONSE = { description: 'The page', content: { 'text/html': { schema: { type: 'string' as const } } } }
