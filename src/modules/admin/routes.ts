import { and, eq, isNull } from 'drizzle-orm'
import { Elysia } from 'elysia'
import { notFound } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import { spaces } from '../../kernel/tables'
import { notModified } from '../../kernel/public-answer'
import { ADMIN_BASE, type AdminFile, encodedBody, loadAdminBundle } from './bundle'

/**
 * The admin app's headers. No inline script and no eval anywhere (the bundle has neither); styles from the app's own
 * stylesheet (React sets `style` through the CSSOM, which CSP does not govern); the API on the same origin; never
 * framed.
 */
export const ADMIN_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ')

const SECURITY_HEADERS = {
  'Content-Security-Policy': ADMIN_CSP,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
}

const IMMUTABLE = 'public, max-age=31536000, immutable'

/**
 * The CSP of one answer: the app's own, plus `frame-src` naming the origin of the Space's preview URL when the page is
 * one of a Space (`/admin/spaces/{space}/…`), so the visual editor can show that site in its frame and nothing else.
 * The origin is the site the Space's content is published to (not a secret); an unknown Space adds nothing.
 */
export function adminCsp(frameOrigins: string[]): string {
  return frameOrigins.length ? `${ADMIN_CSP}; frame-src ${frameOrigins.join(' ')}` : ADMIN_CSP
}

const SPACE_PAGE = /^\/admin\/spaces\/([a-z][a-z0-9-]{0,63})(?:\/|$)/

/** The preview URL's origin of the Space a page of the app belongs to, or null (a short memo: pages are loaded often). */
async function frameOriginsOf(kernel: Kernel | null, pathname: string): Promise<string[]> {
  const m = kernel ? SPACE_PAGE.exec(pathname) : null
  if (!kernel || !m) return []
  const [row] = await kernel.db.db
    .select({ previewUrl: spaces.previewUrl })
    .from(spaces)
    .where(and(eq(spaces.slug, m[1]), isNull(spaces.archivedAt)))
    .limit(1)
  if (!row?.previewUrl) return []
  try {
    const origin = new URL(row.previewUrl).origin
    return origin && origin !== 'null' ? [origin] : []
  } catch {
    return []
  }
}

function answer(request: Request, f: AdminFile, cacheControl: string, frameOrigins: string[] = []): Response {
  const headers: Record<string, string> = { ...SECURITY_HEADERS, 'Content-Type': f.type, 'Cache-Control': cacheControl, ETag: f.etag, Vary: 'Accept-Encoding' }
  if (frameOrigins.length) headers['Content-Security-Policy'] = adminCsp(frameOrigins)
  const unchanged = notModified(request, f.etag, headers)
  if (unchanged) return unchanged
  const { body, encoding } = encodedBody(f, request.headers.get('accept-encoding'))
  if (encoding) headers['Content-Encoding'] = encoding
  return new Response(body, { headers })
}

const html = (summary: string) => ({
  detail: {
    tags: ['Discovery'],
    summary,
    responses: { 200: { description: 'The admin app (HTML)', content: { 'text/html': { schema: { type: 'string' as const } } } } },
  },
})

/** The token of an invitation link (`{PUBLIC_URL}/invite/{token}`, src/modules/members/invitations.ts). */
const INVITE_TOKEN = /^[A-Za-z0-9_-]{43}$/

/** GET /admin and everything below it: hashed files from /admin/assets/, every other path the app's HTML (client routes). */
export function adminRoutes(kernel: Kernel | null = null) {
  const page = async (request: Request) => {
    const origins = await frameOriginsOf(kernel, new URL(request.url).pathname).catch(() => [])
    return answer(request, (await loadAdminBundle()).index, 'no-cache', origins)
  }
  return new Elysia({ tags: ['Discovery'] })
    .get(ADMIN_BASE, ({ request }) => page(request), html('The admin web app'))
    // The invitation mail links to /invite/{token} at the service's root: the app's HTML, whose router moves the
    // address below /admin (main.tsx) and shows the invitation page.
    .get(
      '/invite/:token',
      ({ request, params }) => {
        if (!INVITE_TOKEN.test(params.token)) throw notFound('Invitation')
        return page(request)
      },
      {
        detail: {
          tags: ['Members and roles'],
          summary: 'The link an invitation mail carries: the admin app’s invitation page',
          description:
            'The admin app (HTML), which shows the invitation (`GET /v1/invite/{token}`) at `/admin/invite/{token}` and lets the invitee accept it (signing in or registering with the invited address) or decline it. A malformed token: 404.',
          responses: { 200: { description: 'The admin app (HTML)', content: { 'text/html': { schema: { type: 'string' as const } } } } },
        },
      },
    )
    .get(
      `${ADMIN_BASE}/*`,
      async ({ request, params }) => {
        const rest = params['*']
        if (rest.startsWith('assets/')) {
          const f = (await loadAdminBundle()).assets.get(rest.slice('assets/'.length))
          if (!f) throw notFound('File')
          return answer(request, f, IMMUTABLE)
        }
        return page(request)
      },
      html('The admin web app (client-side routes), and its hashed files under /admin/assets/ (immutable)'),
    )
}
