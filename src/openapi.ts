import { toOpenAPISchema } from '@elysiajs/openapi'
import { type AnyElysia, Elysia } from 'elysia'
import { stringify } from 'yaml'
import pkg from '../package.json'
import redocBundle from '../node_modules/redoc/bundles/redoc.standalone.js' with { type: 'file' }
import { type ErrorDef, KernelErrors } from './kernel/errors'
import type { Kernel } from './kernel/kernel'
import type { Module } from './kernel/module'
import { MIN, type RateLimitRule } from './kernel/rate-limit'
import { ErrorBody, INT_PARAM } from './kernel/schemas'
import { assignOperationIds } from './openapi-names'

/**
 * The OpenAPI 3.1 description, generated from the routes' own schemas (the same TypeBox schemas that validate
 * requests and responses) and completed from the module list: tags per module, security per guard, and the error
 * responses each route can give in the one ErrorBody shape.
 *
 * Rate limit: 60 requests per minute per IP, the route listing's figure (spec 4.7/8), although the discovery
 * description says "no rate limit": the document is large (generating and sending it is the costliest anonymous GET),
 * clients fetch it once, and any edge or client caches it (Cache-Control below).
 */
export const OPENAPI_RATE_LIMITS: RateLimitRule[] = ['/v1/openapi.json', '/v1/openapi.yaml', '/openapi.json', '/openapi.yaml'].map((path) => ({
  id: `openapi${path.startsWith('/v1') ? '.v1' : ''}.${path.endsWith('json') ? 'json' : 'yaml'}`,
  method: 'GET' as const,
  path,
  limit: 60,
  windowSeconds: MIN,
}))

const DESCRIPTION = `A multi-tenant headless CMS: the management API under \`/v1/auth\` and \`/v1/spaces/...\` (bearer tokens), the
public read surface under \`/v1/cdn/{space}/...\` (anonymous, cached, rate limited per IP) and discovery.

Errors always have the shape \`ErrorBody\`: \`{error, message, errors?}\` (\`errors\` holds messages per field with 422; a
500 carries \`request_id\`). A Space the caller cannot access answers 404, exactly like an unknown one. Rate-limited
routes send \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\` and \`RateLimit-Policy\`; 429 adds
\`Retry-After\`. Every response carries \`X-Request-Id\`.

Request bodies are JSON (\`application/json\`): any other media type (a form, multipart, text) answers 415
\`unsupported_media_type\`, except where an operation lists it — the asset upload (\`multipart/form-data\`) and the beacon
(\`text/plain\`, as \`navigator.sendBeacon\` sends it). The public form submit takes JSON too. Integers in paths and
queries are decimal digits only (no sign, exponent, fraction or leading zero).`

const TAG_DESCRIPTIONS: Record<string, string> = {
  Auth: 'Users, tenants and bearer tokens (spec 4.1).',
  Spaces: 'Spaces, Space-scoped tokens and locales (spec 4.8).',
  Stories: 'Stories: drafts, versions, publishing, the tree, bulk operations.',
  Components: 'Component blueprints that Story blocks are validated against.',
  'Public read': 'Published Stories for sites (anonymous, cached, rate limited per IP; spec 4.5).',
  'Public search': 'Full-text search over published Stories (spec 4.4).',
  Webhooks: 'Signed outbound webhooks and their delivery log (spec 4.11, 6).',
  Discovery: 'Version, embed scripts and this description (spec 9, 4.7).',
  Commerce: 'Products, orders and shop settings of a Space: viewer+ reads, editor+ writes (issue 36, docs/commerce.md).',
  'Public shop': 'The storefront: active products (cached like Story reads), anonymous carts whose uuid is the capability, and the checkout that never oversells (rate limited per IP).',
  Payments: 'Stripe through its HTTP API: a Space’s own keys (sealed, shown masked) or the instance’s, and the signed webhook receivers (checkout.session.completed / expired, customer.subscription.*).',
}

type Operation = {
  tags?: string[]
  security?: Record<string, string[]>[]
  responses?: Record<string, unknown>
  parameters?: { name: string; in: string }[]
  requestBody?: unknown
  [k: string]: unknown
}

const errorRef = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
})

function describeCodes(defs: ErrorDef[]): string {
  return defs.map((d) => `\`${d.code}\`: ${d.description}`).join(' ')
}

const ERROR_BODY_REF = { $ref: '#/components/schemas/ErrorBody' }

/**
 * TypeBox schemas carry validation-only keys (`error` messages, `$id`s of recursive schemas referenced by bare name):
 * turn them into plain JSON Schema, moving recursive definitions to components. An integer in a URL (intString(),
 * validated as a digit pattern) is published as `type: integer` with its bounds; the ErrorBody a route names is a
 * reference to the one component.
 */
function sanitize(node: unknown, components: Record<string, unknown>, isNameMap = false): unknown {
  if (Array.isArray(node)) return node.map((n) => sanitize(n, components))
  if (!node || typeof node !== 'object') return node
  if (!isNameMap) {
    const schema = node as Record<string, unknown>
    const int = schema[INT_PARAM] as { minimum: number; maximum: number } | undefined
    if (int) return { type: 'integer', minimum: int.minimum, maximum: int.maximum, ...(schema.description ? { description: schema.description } : {}) }
    if (schema.title === ErrorBody.title && schema.type === 'object') return ERROR_BODY_REF
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    // Keys of `properties`, `paths`, `responses` ... are names, not schema keywords.
    if (isNameMap) {
      out[k] = sanitize(v, components)
      continue
    }
    if (k === 'error' && typeof v === 'string') continue
    if (k === '$ref' && typeof v === 'string' && !v.startsWith('#')) {
      out.$ref = `#/components/schemas/${v}`
      continue
    }
    if (k === '$id' && typeof v === 'string' && !v.startsWith('#')) {
      // A named schema (`$id`: Story, Block, Asset, ...; recursive ones too) is one component, referred to by name.
      if (!(v in components)) {
        components[v] = {}
        const { $id: _drop, ...rest } = node as Record<string, unknown>
        components[v] = sanitize(rest, components)
      }
      return { $ref: `#/components/schemas/${v}` }
    }
    out[k] = sanitize(v, components, NAME_MAPS.has(k))
  }
  return out
}

const NAME_MAPS = new Set(['properties', 'patternProperties', 'schemas', 'responses', 'content', 'headers', 'securitySchemes'])

/**
 * The app as the generator should see it. The kernel's body parser is a function hook (kernel/request-body.ts), which the
 * generator cannot name, so it would publish `requestBody.content: {}`: name it by what it takes, JSON. (A route that
 * takes another type declares its own `detail.requestBody` and no body schema: the asset upload, the beacon.)
 */
function asGeneratorSees(app: AnyElysia): AnyElysia {
  const inner = app as unknown as Routed
  return {
    getGlobalDefinitions: () => inner.getGlobalDefinitions?.(),
    getGlobalRoutes: () => inner.getGlobalRoutes().map((r) => (r.hooks?.body ? { ...r, hooks: { ...r.hooks, parse: [{ fn: 'json' }] } } : r)),
  } as unknown as AnyElysia
}

/** What the generator reads of an Elysia app (protected in Elysia's types). */
interface Routed {
  getGlobalDefinitions?(): unknown
  getGlobalRoutes(): { method: string; path: string; hooks?: { body?: unknown; [k: string]: unknown } }[]
}

/** The ErrorBody component itself (not a reference to itself). */
function errorBodySchema(components: Record<string, unknown>) {
  const { title: _title, ...schema } = ErrorBody
  return sanitize(schema, components)
}

const WRITE_METHODS = new Set(['post', 'put', 'patch', 'delete'])

/** `code`: description, for a response description. */
const codes = (defs: ErrorDef[]) => defs.map((d) => `\`${d.code}\` (${d.description.replace(/\.$/, '')})`).join('; ')

export function buildDocument(app: AnyElysia, kernel: Kernel, modules: readonly Module[], owners: ReadonlyMap<string, Module> = new Map()) {
  const generated = toOpenAPISchema(asGeneratorSees(app), { staticFile: false, methods: ['options'] }, undefined, undefined, '3.1.1')
  const routeKeys = new Map((app as unknown as Routed).getGlobalRoutes().map((r) => [`${r.method.toLowerCase()} ${r.path.replace(/:([^/]+)/g, '{$1}')}`, `${r.method} ${r.path}`]))
  const extraSchemas: Record<string, unknown> = {}
  const paths = sanitize(generated.paths, extraSchemas) as Record<string, Record<string, Operation>>
  const components = sanitize(generated.components, extraSchemas) as { schemas?: Record<string, unknown> }

  // Codes of filter-hook handlers (plugins: plugin_veto, plugin_unavailable), on the routes of the hooks they handle.
  const filterErrorsOn = (route: string) =>
    modules.flatMap((m) => {
      if (!m.filterErrors?.length || !m.filters) return []
      const hooks = '*' in m.filters ? kernel.filters.names() : Object.keys(m.filters)
      return hooks.some((h) => kernel.filters.declaration(h)?.routes.includes(route)) ? m.filterErrors : []
    })
  const moduleErrors = [...new Set(modules.flatMap((m) => [...(m.errors ?? []), ...(m.errorsOn ?? []).map((e) => e.error), ...(m.filterErrors ?? [])]))]
  const table = kernel.rateLimiter.table
  const out: Record<string, Record<string, Operation>> = {}
  for (const [rawPath, item] of Object.entries(paths as Record<string, Record<string, Operation>>)) {
    // Elysia's `/prefix/` roots and `*` wildcards, in OpenAPI terms: `/v1/spaces`, `/v1/cdn/{space}/stories/{path}`.
    let path = rawPath.length > 1 ? rawPath.replace(/\/$/, '') : rawPath
    const wildcard = path.endsWith('/*')
    if (wildcard) path = `${path.slice(0, -2)}/{path}`
    const sample = path.replace(/\{[^}]+\}/g, 'x')
    for (const [method, op] of Object.entries(item)) {
      // `bearer`: the guards' user or Space tokens; `preview`: a route that checks a preview token itself.
      const declared = Array.isArray(op.security) ? (op.security as Record<string, string[]>[]) : []
      const bearer = declared.some((s) => s && 'bearer' in s)
      const previewToken = declared.some((s) => s && 'preview' in s)
      const guard = typeof op['x-guard'] === 'string' ? op['x-guard'] : ''
      const spaceScoped = guard.startsWith('role ')
      if (!bearer && !previewToken) op.security = []
      if (wildcard) {
        op.parameters = (op.parameters ?? []).filter((p) => p.name !== '*')
        op.parameters.unshift({ name: 'path', in: 'path', required: true, schema: { type: 'string' }, description: 'The rest of the path' } as never)
      }
      const hasBody = op.requestBody !== undefined
      const owner = owners.get(routeKeys.get(`${method} ${rawPath}`) ?? '')
      const write = WRITE_METHODS.has(method)
      const rateLimited = table.match(method.toUpperCase(), sample) !== undefined
      const responses = (op.responses ??= {})
      for (const [code, r] of Object.entries(responses)) {
        const res = r as { description?: string; content?: Record<string, unknown> }
        if (!res || typeof res !== 'object') continue
        if (!res.description || res.description.startsWith('Response for status')) res.description = code === '204' ? 'No content' : 'Success'
        // A t.Void() response: no body at all.
        if (res.content && typeof res.content.type === 'string') delete res.content
      }
      // The module's own error codes of this status: a read may answer its 404s, a write any of them (422s only with a
      // body to refuse).
      const foreign = [
        ...modules.flatMap((m) =>
          (m.errorsOn ?? []).filter((e) => m !== owner && e.on({ method: method.toUpperCase(), path, bearer })).map((e) => e.error),
        ),
        ...filterErrorsOn(`${method.toUpperCase()} ${path}`),
      ]
      const own = (status: number) => [
        ...(owner?.errors ?? []).filter((d) => d.status === status && (status === 404 || (write && (status !== 422 || hasBody)))),
        ...foreign.filter((d) => d.status === status),
      ]
      const add = (status: number, text: string, always = false) => {
        const extra = own(status)
        if (!always && extra.length === 0) return
        const described = extra.length ? `${text}${text ? '; ' : ''}${codes(extra)}` : text
        const existing = responses[status] as { description?: string; content?: Record<string, { schema?: unknown }> } | undefined
        if (!existing) responses[status] = errorRef(described)
        else if (existing.content?.['application/json']?.schema === ERROR_BODY_REF && existing.description === 'Success') existing.description = described
      }
      const bodyTypes = Object.keys((op.requestBody as { content?: object } | undefined)?.content ?? {})
      if (hasBody) {
        add(400, '`invalid_json`: the body is not valid JSON (or nests too deep)', true)
        add(413, '`payload_too_large`: the body is over the size limit', true)
        add(415, `\`unsupported_media_type\`: the body is not ${bodyTypes.length ? bodyTypes.join(' or ') : 'application/json'}`, true)
      }
      add(
        401,
        bearer
          ? '`unauthorized`: missing, invalid, expired or revoked bearer token'
          : previewToken
            ? '`unauthorized`: missing, invalid or expired preview token (`Authorization: Bearer p_…`)'
            : '',
        bearer || previewToken,
      )
      add(403, bearer ? (spaceScoped ? '`forbidden`: the role in this Space is too low for this action' : '`forbidden`: this token kind may not do this') : '', bearer)
      if (bearer && guard.includes('user_required')) {
        const extra = own(403)
        responses[403] = errorRef(
          `\`user_required\`: a Space-scoped token (any role) — this route needs a user token${spaceScoped ? '; `forbidden`: the role in this Space is too low' : ''}${extra.length ? `; ${codes(extra)}` : ''}`,
        )
      }
      add(404, '`not_found`: unknown route or resource, or a Space the caller cannot access', true)
      // Any authenticated write may meet a unique or foreign-key constraint (another request got there first).
      add(402, '')
      add(409, write && bearer ? '`conflict`: the change conflicts with the current state' : '', write && bearer)
      add(422, '`validation_failed`: see `errors` for messages per field', hasBody || (op.parameters?.some((p) => p.in === 'query') ?? false))
      add(429, '`rate_limited`: retry after Retry-After seconds', rateLimited)
      add(500, '`internal_error`: with request_id', true)
      add(507, '`insufficient_storage`: the database has no disk space left; nothing was written', write)
      add(503, '`database_unavailable`: the database cannot be reached right now; retry after Retry-After seconds', true)
      ;(out[path] ??= {})[method] = op
    }
  }

  // Every operation a stable, readable operationId (openapi-names.ts); routes that name theirs keep them.
  const explicit = new Set<string>()
  for (const r of (app as unknown as Routed).getGlobalRoutes()) {
    const id = (r.hooks?.detail as { operationId?: unknown } | undefined)?.operationId
    if (typeof id === 'string') for (const [path, item] of Object.entries(out)) for (const [m, op] of Object.entries(item)) if (op.operationId === id) explicit.add(`${m} ${path}`)
  }
  assignOperationIds(out as Record<string, Record<string, { operationId?: string }>>, explicit)

  return {
    openapi: '3.1.1',
    info: {
      title: 'Content Service API',
      version: '0.1.0',
      description: `${DESCRIPTION}\n\nError codes beyond the kernel's: ${describeCodes(moduleErrors)}`,
      license: { name: 'Proprietary', url: 'https://github.com/content-service/content-service/blob/main/LICENSE' },
    },
    servers: [{ url: kernel.config.publicUrl ?? '/', description: 'This server' }],
    tags: [...new Set(Object.values(out).flatMap((i) => Object.values(i).flatMap((o) => o.tags ?? [])))]
      .sort()
      .map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name })),
    paths: out,
    components: {
      ...components,
      schemas: { ...(components?.schemas ?? {}), ...extraSchemas, ErrorBody: errorBodySchema(extraSchemas) },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'A user token from POST /v1/auth/login or a Space-scoped token (`<id>.<secret>`).',
        },
        preview: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A preview token (`p_…`, one hour, read-only) from POST /v1/spaces/{space}/preview-tokens: reads drafts of its Space and answers GET /v1/cdn/{space}/preview.',
        },
      },
    },
    'x-service-version': pkg.version,
    'x-kernel-error-codes': Object.values(KernelErrors).map((d) => ({ code: d.code, status: d.status, description: d.description })),
  }
}

const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Content Service API</title><style>body{margin:0}</style></head>
<body><redoc spec-url="/v1/openapi.json"></redoc><script src="/docs/redoc.standalone.js"></script></body></html>`

/**
 * The docs page runs only its own Redoc bundle: no other script, no framing (clickjacking), no form posts, no `<base>`.
 * Redoc injects its styles as `<style>` elements and runs its search in a Worker from a `blob:` URL.
 */
export const DOCS_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
    "connect-src 'self'; worker-src blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
}

/** `/v1/openapi.json`, `/v1/openapi.yaml`, the same at the host root, and a docs page at `/docs` (Redoc, served locally). */
export function openapiRoutes(getApp: () => AnyElysia, kernel: Kernel, modules: readonly Module[], owners: ReadonlyMap<string, Module> = new Map()) {
  let cached: { json: string; yaml: string } | null = null
  const docs = () => {
    if (!cached) {
      const doc = buildDocument(getApp(), kernel, modules, owners)
      cached = { json: JSON.stringify(doc), yaml: stringify(JSON.parse(JSON.stringify(doc)), { aliasDuplicateObjects: false }) }
    }
    return cached
  }
  const json = () => new Response(docs().json, { headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'public, max-age=300' } })
  const yaml = () => new Response(docs().yaml, { headers: { 'Content-Type': 'application/yaml; charset=utf-8', 'Cache-Control': 'public, max-age=300' } })
  const doc = (summary: string, type: string) => ({
    detail: { tags: ['Discovery'], summary, responses: { 200: { description: summary, content: { [type]: { schema: { type: 'object' as const } } } } } },
  })
  return new Elysia({ name: 'openapi' })
    .get('/v1/openapi.json', json, doc('This OpenAPI 3.1 description (JSON)', 'application/json'))
    .get('/v1/openapi.yaml', yaml, doc('This OpenAPI 3.1 description (YAML)', 'application/yaml'))
    .get('/openapi.json', json, doc('The same description at the host root (JSON)', 'application/json'))
    .get('/openapi.yaml', yaml, doc('The same description at the host root (YAML)', 'application/yaml'))
    .get('/docs', () => new Response(DOCS_HTML, { headers: DOCS_HEADERS }), doc('API reference for people (Redoc, served from this binary)', 'text/html'))
    .get(
      '/docs/redoc.standalone.js',
      () => new Response(Bun.file(redocBundle), { headers: { 'Content-Type': 'application/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=86400' } }),
      doc('The Redoc script of the docs page', 'application/javascript'),
    )
}
