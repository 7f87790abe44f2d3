import { Elysia } from 'elysia'
import type { Deps } from '../../deps'
import { buildScript, SERVICE_VERSION, versionDocument } from './service'

/** The public base URL: PUBLIC_URL, else the origin the request came to. */
export function baseUrlOf(deps: Deps, request: Request): string {
  return deps.config.publicUrl ?? new URL(request.url).origin
}

const SCRIPT_HEADERS = {
  'Content-Type': 'application/javascript; charset=utf-8',
  'Access-Control-Allow-Origin': '*',
  'Cross-Origin-Resource-Policy': 'cross-origin',
}

/** GET /v1/version (spec 9) and the embed scripts at the host root. */
export function systemRoutes(deps: Deps) {
  const embed = buildScript('embed')
  const admin = buildScript('admin')
  const script = (s: typeof embed, cache: string) => () =>
    new Response(s.body, { headers: { ...SCRIPT_HEADERS, 'Cache-Control': cache } })
  const versioned = `/embed-v${SERVICE_VERSION}.js`
  return {
    v1: new Elysia({ tags: ['Discovery'] }).get(
      '/version',
      ({ request, set }) => {
        // The edge keeps it about 600 ms; Cache-Control counts whole seconds, so 1 s for shared caches and 0 for
        // browsers, which revalidate each time.
        set.headers['cache-control'] = 'public, max-age=0, s-maxage=1'
        return versionDocument(deps.config, baseUrlOf(deps, request), embed, admin)
      },
      { detail: { summary: 'Service and component versions (never rate limited)' } },
    ),
    root: new Elysia({ tags: ['Discovery'] })
      .get('/embed.js', script(embed, 'public, max-age=300'))
      .get(versioned, script(embed, 'public, max-age=31536000, immutable'))
      // OPTIONS preflights on these paths are answered 204 with Access-Control-Allow-Origin by the kernel's CORS.
      .get('/service-admin.js', script(admin, 'public, max-age=300')),
  }
}
