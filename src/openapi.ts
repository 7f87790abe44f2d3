import { toOpenAPISchema } from '@elysiajs/openapi'
import { type AnyElysia, Elysia } from 'elysia'
import { stringify } from 'yaml'
import pkg from '../package.json'
import redocBundle from '../node_modules/redoc/bundles/redoc.standalone.js' with { type: 'file' }
import { type ErrorDef, KernelErrors } from './kernel/errors'
import type { Kernel } from './kernel/kernel'
import type { Module } from './kernel/module'
import { MIN, type RateLimitRule } from './kernel/rate-limit'
import { ErrorBody } from './kernel/schemas'

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
\`Retry-After\`. Every response carries \`X-Request-Id\`.`

type Operation = {
  tags?: string[]
  security?: Record<string, string[]>[]
  responses?: Record<string, unknown>
  parameters?: { name: string; in: string }[]
  [k: string]: unknown
}

interface RouteFacts {
  /** `authenticated`, `userToken` or `spaceRole` guard. */
  bearer: boolean
  spaceScoped: boolean
  body: boolean
  rateLimited: boolean
}

const errorRef = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
})

function describeCodes(defs: ErrorDef[]): string {
  return defs.map((d) => `\`${d.code}\`: ${d.description}`).join(' ')
}

/** Elysia path (`/v1/spaces/:space`) → OpenAPI path (`/v1/spaces/{space}`). */
const openapiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\/\*$/, '/{*}')

export function buildDocument(app: AnyElysia, kernel: Kernel, modules: readonly Module[]) {
  const { paths, components } = toOpenAPISchema(app, { staticFile: false, methods: ['options'] }, undefined, undefined, '3.1.1')

  // Which module owns a tag (tags are set per route group), and the error codes each module declares.
  const facts = new Map<string, RouteFacts>()
  for (const r of app.routes as { method: string; path: string; hooks?: Record<string, unknown> }[]) {
    const h = r.hooks ?? {}
    const bearer = h.authenticated !== undefined || h.userToken !== undefined || h.spaceRole !== undefined
    facts.set(`${r.method.toLowerCase()} ${openapiPath(r.path)}`, {
      bearer,
      spaceScoped: h.spaceRole !== undefined,
      body: h.body !== undefined,
      rateLimited: kernel.rateLimiter.table.match(r.method, r.path.replace(/:([A-Za-z0-9_]+)/g, 'x').replace(/\*$/, 'x')) !== undefined,
    })
  }
  const moduleErrors = modules.flatMap((m) => m.errors ?? [])

  for (const [path, item] of Object.entries(paths as Record<string, Record<string, Operation>>)) {
    for (const [method, op] of Object.entries(item)) {
      const f = facts.get(`${method} ${path}`) ?? { bearer: false, spaceScoped: false, body: false, rateLimited: false }
      op.security = f.bearer ? [{ bearer: [] }] : []
      const responses = (op.responses ??= {})
      for (const [code, r] of Object.entries(responses)) {
        if (r && typeof r === 'object' && !('description' in r)) (r as { description: string }).description = code.startsWith('2') ? 'Success' : 'Error'
      }
      const add = (status: number, text: string) => {
        if (!responses[status]) responses[status] = errorRef(text)
      }
      if (f.body) {
        add(400, 'invalid_json: the body is not valid JSON')
        add(413, 'payload_too_large: the body is over the size limit')
        add(415, 'unsupported_media_type: the body is not application/json')
      }
      if (f.bearer) add(401, 'unauthorized: missing, invalid, expired or revoked bearer token')
      if (f.spaceScoped || f.bearer) add(403, 'forbidden: the role (or token kind) does not allow this')
      add(404, 'not_found: unknown route or resource, or a Space the caller cannot access')
      if (f.body || (op.parameters?.some((p) => p.in === 'query') ?? false)) add(422, 'validation_failed: see `errors` for messages per field')
      if (f.rateLimited) add(429, 'rate_limited: retry after Retry-After seconds')
      add(500, 'internal_error: with request_id')
    }
  }

  return {
    openapi: '3.1.1',
    info: {
      title: 'Content Service API',
      version: '0.1.0',
      description: `${DESCRIPTION}\n\nError codes beyond the kernel's: ${describeCodes(moduleErrors)}`,
      license: { name: 'Proprietary' },
    },
    servers: [{ url: kernel.config.publicUrl ?? '/', description: 'This server' }],
    tags: [...new Set(Object.values(paths as Record<string, Record<string, Operation>>).flatMap((i) => Object.values(i).flatMap((o) => o.tags ?? [])))]
      .sort()
      .map((name) => ({ name })),
    paths,
    components: {
      ...components,
      schemas: { ...(components?.schemas ?? {}), ErrorBody: { ...ErrorBody, $id: undefined } },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'A user token from POST /v1/auth/login or a Space-scoped token (`<id>.<secret>`).',
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

/** `/v1/openapi.json`, `/v1/openapi.yaml`, the same at the host root, and a docs page at `/docs` (Redoc, served locally). */
export function openapiRoutes(getApp: () => AnyElysia, kernel: Kernel, modules: readonly Module[]) {
  let cached: { json: string; yaml: string } | null = null
  const docs = () => {
    if (!cached) {
      const doc = buildDocument(getApp(), kernel, modules)
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
    .get('/docs', () => new Response(DOCS_HTML, { headers: { 'Content-Type': 'text/html; charset=utf-8' } }), doc('API reference for people (Redoc, served from this binary)', 'text/html'))
    .get(
      '/docs/redoc.standalone.js',
      () => new Response(Bun.file(redocBundle), { headers: { 'Content-Type': 'application/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=86400' } }),
      doc('The Redoc script of the docs page', 'application/javascript'),
    )
}
