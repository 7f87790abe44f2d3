import { Elysia, t } from 'elysia'
import { oneOf } from '../../kernel/schemas'
import { publicOrigin } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import { buildScript, SERVICE_VERSION, versionDocument } from './service'

/** The public base URL: PUBLIC_URL, else the origin the request came to. */
export function baseUrlOf(kernel: Kernel, request: Request): string {
  return publicOrigin(kernel.config, request.url)
}

const SCRIPT_HEADERS = {
  'Content-Type': 'application/javascript; charset=utf-8',
  'Access-Control-Allow-Origin': '*',
  'Cross-Origin-Resource-Policy': 'cross-origin',
}

const Component = t.Object({ latest: t.String(), npm: t.String() })
export const VersionModel = t.Object({
  service: t.Object({
    version: t.String(),
    channel: oneOf(['pre-alpha', 'alpha', 'beta', 'stable']),
    released_at: t.String(),
    min_supported_sdk: t.String(),
    min_supported_embed: t.String(),
  }),
  components: t.Object({
    embed_js: t.Object({ latest: t.String(), url: t.String(), versioned_url: t.String(), integrity: t.String(), changelog: t.String() }),
    service_admin_js: t.Object({ latest: t.String(), url: t.String(), integrity: t.String() }),
    sdk_js: Component,
    sdk_astro: Component,
    cli: Component,
  }),
  images: t.Object(
    {
      widths: t.Array(t.Integer(), { description: 'IMAGE_WIDTHS: the widths (and heights) an unsigned transform URL may ask for' }),
      formats: t.Array(t.String(), { description: 'Transform formats: `{asset url}.{format}`' }),
    },
    { description: 'What image transform URLs resolve: clients build srcsets from these widths only' },
  ),
})

const scriptDoc = (summary: string) => ({
  summary,
  responses: { 200: { description: 'The script', content: { 'application/javascript': { schema: { type: 'string' as const } } } } },
})

/** GET /v1/version (spec 9). */
export function versionRoutes(kernel: Kernel) {
  const embed = buildScript('embed')
  const admin = buildScript('admin')
  return new Elysia({ tags: ['Discovery'] }).get(
    '/version',
    ({ request, set }) => {
      // The edge keeps it about 600 ms; Cache-Control counts whole seconds, so 1 s for shared caches and 0 for
      // browsers, which revalidate each time.
      set.headers['cache-control'] = 'public, max-age=0, s-maxage=1'
      return versionDocument(kernel.config, baseUrlOf(kernel, request), embed, admin)
    },
    { response: VersionModel, detail: { summary: 'Service and component versions (never rate limited)' } },
  )
}

/** The embed scripts at the host root (spec 9). */
export function scriptRoutes() {
  const embed = buildScript('embed')
  const admin = buildScript('admin')
  const script = (s: typeof embed, cache: string) => () => new Response(s.body, { headers: { ...SCRIPT_HEADERS, 'Cache-Control': cache } })
  return (
    new Elysia({ tags: ['Discovery'] })
      .get('/embed.js', script(embed, 'public, max-age=300'), { detail: scriptDoc('The embed script (latest)') })
      .get(`/embed-v${SERVICE_VERSION}.js`, script(embed, 'public, max-age=31536000, immutable'), {
        detail: scriptDoc('The embed script of this version (immutable)'),
      })
      // OPTIONS preflights on these paths are answered 204 with Access-Control-Allow-Origin by the kernel's CORS.
      .get('/service-admin.js', script(admin, 'public, max-age=300'), { detail: scriptDoc('The in-page editing bridge (docs/in-page-editing.md)') })
  )
}
