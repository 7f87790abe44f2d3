import { Elysia, t } from 'elysia'
import { type DocumentNode, GraphQLError, type GraphQLSchema, Kind } from 'graphql'
import { createYoga, type Plugin } from 'graphql-yoga'
import { AppError, KernelErrors } from '../../kernel/errors'
import { DataLoader, type GraphQLContext } from '../../kernel/graphql'
import { publicOrigin } from '../../kernel/http'
import { readJson } from '../../kernel/json'
import type { Kernel } from '../../kernel/kernel'
import type { RouteContext } from '../../kernel/module'
import { answerHeaders, bodyAnswer, cacheControls, conditionalAnswer, etagOf, JSON_TYPE } from '../../kernel/public-answer'
import { readArguments, type ReadStep, readVary } from '../../kernel/read'
import { expandedSelections, LIMITS, operationCost, VALIDATION_RULES } from './limits'
import { buildSchema } from './schema'

/** The per-request context plus what the endpoint learns while executing (was there an error, cache hints). */
interface RequestContext extends GraphQLContext {
  /** Shared by reference: yoga's context object inherits from the one handed to it. */
  outcome: { executed: boolean; errored: boolean }
  hints: string[]
}

/** `Cache-Control` of a GET answer: the strictest hint a resolver gave, else the public read's. */
function cacheControlOf(hints: string[], publicCache: string): string {
  if (hints.some((h) => h.includes('no-store'))) return 'no-store'
  return hints.find((h) => h.startsWith('private')) ?? publicCache
}

function newContext(request: Request, requestId: string, clientIp: string, viaTrustedProxy: boolean, origin: string): RequestContext {
  const loaders = new Map<string, DataLoader<unknown, unknown, string>>()
  const hints: string[] = []
  return {
    request,
    requestId,
    clientIp,
    viaTrustedProxy,
    origin,
    outcome: { executed: false, errored: false },
    hints,
    loader<K, V>(name: string, batch: DataLoader.BatchLoadFn<K, V>, options?: DataLoader.Options<K, V, string>) {
      let l = loaders.get(name) as DataLoader<K, V, string> | undefined
      if (!l) {
        l = new DataLoader<K, V, string>(batch, { maxBatchSize: 1000, ...options })
        loaders.set(name, l as DataLoader<unknown, unknown, string>)
      }
      return l
    },
    cacheHint(cacheControl: string) {
      hints.push(cacheControl)
    },
  }
}

/**
 * Limits and error masking as a yoga plugin: the validation rules (one operation, read-only, aliases, depth) run with
 * graphql-js's own; the cost needs the variables, so it is checked when execution starts. After execution, AppErrors
 * become GraphQL errors with their machine code; any other error is logged and masked, with the request id.
 */
function guardPlugin(kernel: Kernel): Plugin {
  return {
    // How many operations a document holds is known at parse: more than one is refused there, named or not, so the
    // answer is a GraphQL error in a 200 like a syntax error (GraphQL over HTTP with application/json). Yoga caches
    // parse results per document text, so only what the text alone decides belongs here — not the operationName.
    // The parser stops past LIMITS.maxTokens tokens, and a document whose fragment spreads expand past
    // LIMITS.maxSelections selections is refused here, before graphql-js's validation walks what they multiply to.
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => {
        let document: DocumentNode
        try {
          document = parseFn(source, { ...options, maxTokens: LIMITS.maxTokens })
        } catch (e) {
          if (e instanceof GraphQLError && /contains more th\w+ \d+ tokens/.test(e.message)) {
            throw new GraphQLError(`The document has more than ${LIMITS.maxTokens} tokens; at most ${LIMITS.maxTokens} are allowed.`, {
              extensions: { code: 'too_complex', max_tokens: LIMITS.maxTokens },
            })
          }
          throw e
        }
        checkOperationCount(document)
        const selections = expandedSelections(document)
        if (selections > LIMITS.maxSelections) {
          throw new GraphQLError(
            `The document expands to more than ${LIMITS.maxSelections} selections once its fragments are spread; at most ${LIMITS.maxSelections} are allowed.`,
            { extensions: { code: 'too_complex', max_selections: LIMITS.maxSelections } },
          )
        }
        return document
      })
    },
    onValidate({ addValidationRule }) {
      for (const rule of VALIDATION_RULES) addValidationRule(rule)
    },
    onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as unknown as RequestContext
      const cost = operationCost(args.schema, args.document, args.operationName, args.variableValues as Record<string, unknown> | undefined)
      if (cost > LIMITS.maxCost) {
        ctx.outcome.errored = true
        setResultAndStopExecution({
          errors: [
            new GraphQLError(`The query costs ${cost}; at most ${LIMITS.maxCost} is allowed. Ask for fewer items (perPage) or fields.`, {
              extensions: { code: 'too_costly', cost, max_cost: LIMITS.maxCost },
            }),
          ],
        })
        return
      }
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in (result as object)) return
          const r = result as { data?: unknown; errors?: readonly GraphQLError[] }
          ctx.outcome.executed = true
          if (!r.errors?.length) return
          ctx.outcome.errored = true
          setResult({ ...r, errors: r.errors.map((e) => maskError(kernel, e, ctx.requestId)) } as never)
        },
      }
    },
  }
}

/**
 * One operation per request (the validation rule says so too, for documents that reach validation). Thrown from the
 * parse, the error keeps its code and is answered like a syntax error: 200 with `errors`, whether or not the request
 * named an operation.
 */
function checkOperationCount(document: DocumentNode) {
  const ops = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length
  if (ops > LIMITS.maxOperations) {
    throw new GraphQLError(`A request may carry ${LIMITS.maxOperations} operation; this one has ${ops}.`, { extensions: { code: 'too_many_operations' } })
  }
  if (ops === 0) throw new GraphQLError('The document has no operation to execute (fragments only).', { extensions: { code: 'no_operation' } })
}

function maskError(kernel: Kernel, e: GraphQLError, requestId: string): GraphQLError {
  const original = e.originalError
  // Raised on purpose (a GraphQLError thrown by a resolver, or graphql-js's own coercion errors): shown as is.
  if (!original || original instanceof GraphQLError) return e
  if (original instanceof AppError) {
    const detail = original.fields ? Object.entries(original.fields).map(([k, v]) => `${k} ${v.join('; ')}`) : []
    return new GraphQLError(detail.length ? `${original.message} ${detail.join('. ')}.` : original.message, {
      nodes: e.nodes,
      path: e.path,
      extensions: { code: original.code, ...(original.fields ? { errors: original.fields } : {}) },
    })
  }
  kernel.logger.error('unhandled error in a GraphQL resolver', {
    request_id: requestId,
    path: e.path?.join('.'),
    error: `${original.name}: ${original.message}`,
    stack: original.stack,
  })
  return new GraphQLError('Something went wrong on our side.', {
    nodes: e.nodes,
    path: e.path,
    extensions: { code: 'internal_error', request_id: requestId },
  })
}


const GraphQLQuery = t.Object({
  // No maxLength here: a longer document is 413 payload_too_large (bytes of UTF-8, checked in `execute`), not a 422.
  query: t.String({ minLength: 1, error: 'is required: a GraphQL document', description: 'The GraphQL document (at most 100 KB of UTF-8; longer: 413 payload_too_large)' }),
  variables: t.Optional(t.String({ maxLength: 64 * 1024, error: 'must be a JSON object', description: 'Variables as a JSON object' })),
  operationName: t.Optional(t.String({ maxLength: 200, error: 'must be an operation name' })),
  extensions: t.Optional(t.String({ maxLength: 4096, error: 'must be a JSON object' })),
})

const JsonObject = t.Record(t.String(), t.Unknown())
const GraphQLBody = t.Object({
  // No maxLength here: a longer document is 413 payload_too_large (bytes of UTF-8, checked in `execute`), not a 422.
  query: t.String({ minLength: 1, error: 'is required: a GraphQL document', description: 'The GraphQL document (at most 100 KB of UTF-8; longer: 413 payload_too_large)' }),
  variables: t.Optional(t.Union([JsonObject, t.Null()], { error: 'must be a JSON object' })),
  operationName: t.Optional(t.Union([t.String({ maxLength: 200 }), t.Null()], { error: 'must be an operation name' })),
  extensions: t.Optional(t.Union([JsonObject, t.Null()], { error: 'must be a JSON object' })),
})

/** A JSON object from a query-string value (GET), bounded like every JSON body. */
function jsonParam(name: string, value: string | undefined): Record<string, unknown> | undefined {
  if (value === undefined || value === '') return undefined
  const read = readJson(new TextEncoder().encode(value))
  if ('value' in read && (read.value === null || (typeof read.value === 'object' && !Array.isArray(read.value)))) {
    return (read.value as Record<string, unknown> | null) ?? undefined
  }
  throw KernelErrors.validationFailed('The request is not valid.', { [name]: ['must be a JSON object'] })
}

const RESULT_DOC = {
  description: 'A GraphQL response: `data` and/or `errors` (GraphQL errors, parse and validation errors included, answer 200)',
  content: {
    'application/json': {
      schema: {
        type: 'object' as const,
        properties: {
          data: { type: ['object', 'null'] as never, description: 'The selected fields' },
          errors: {
            type: 'array' as const,
            items: {
              type: 'object' as const,
              properties: {
                message: { type: 'string' as const },
                path: { type: 'array' as const, items: {} },
                extensions: { type: 'object' as const, description: '`code` (machine code); `request_id` on internal errors' },
              },
            },
          },
        },
      },
    },
  },
}

/** The endpoint's description; `story`'s arguments include those the read steps declare for their headers. */
const about = (steps: readonly ReadStep[]) => `Read-only: a Query type only (a mutation or subscription is a GraphQL error). Fields come from the modules:
\`story(space, path | uuid, lang${readArguments(steps)
  .map((h) => `, ${h.argument.name}`)
  .join('')})\`, \`stories(space, startsWith, page, perPage, lang, sortBy)\`,
\`search(space, q, lang, page, perPage)\`, \`space(slug)\` — through the same services as the REST routes (published
content only, locale fallback, segment resolution, datasource markers). The schema: GET /v1/graphql/schema.gql.

Limits: the query text at most 100 KB of UTF-8 (longer: 413 \`payload_too_large\`); at most 2,000 lexical tokens
(comments excluded) and at most 10,000 selections once fragment spreads are expanded (else a GraphQL error with
\`extensions.code: too_complex\`); one operation per request; at most 20 aliases; fields nested at most 10 deep (20 below
an introspection field); a cost of at most 5,000 (every field 1, a list field's selection times its \`perPage\`). Errors: GraphQL errors carry
\`extensions.code\`; unexpected ones are masked ("Something went wrong on our side.") with \`extensions.request_id\`.
As GraphQL over HTTP asks for \`application/json\` answers, a well-formed request whose document cannot run answers 200
with \`errors\` (syntax, validation, \`too_many_operations\` — named or not —, \`no_operation\`, \`unknown_operation\` when
\`operationName\` names none); a malformed request (no \`query\`, bad JSON, \`variables\` not an object) answers the shared
error body (400/413/422). A bad argument value is a GraphQL error with \`extensions.code: validation_failed\` and
\`extensions.errors\` keyed by the argument's name (\`perPage\`).
600 requests per minute per IP.`

/** POST and GET /v1/graphql (graphql-yoga inside this Elysia app), GET /v1/graphql/schema.gql. */
export function graphqlRoutes(ctx: RouteContext<unknown>) {
  const { kernel } = ctx
  const { schema, sdl } = buildSchema(kernel.graphql)
  const publicCache = cacheControls(kernel.config).public
  const vary = readVary(kernel.readSteps)
  const ABOUT = about(kernel.readSteps)
  const sdlEtag = etagOf(sdl)
  const sdlHeaders = answerHeaders(sdlEtag, { cacheControl: 'public, max-age=300', contentType: 'text/plain; charset=utf-8' })

  const yoga = createYoga<Record<string, unknown>>({
    schema: schema as GraphQLSchema,
    graphqlEndpoint: '/v1/graphql',
    graphiql: false,
    landingPage: false,
    maskedErrors: false, // guardPlugin masks, with the request id
    logging: false,
    cors: false, // the kernel's request front answers CORS
    batching: false,
    // Parsed documents (and parse errors) are kept per query text in small LRUs, for short texts only: a repeated
    // query is parsed and validated once, and 100 KB documents cannot fill the memory (yoga's default keeps 1,024
    // documents of any size for an hour).
    parserAndValidationCache: { documentCache: new TextLru<DocumentNode>(), errorCache: new TextLru<unknown>() },
    plugins: [guardPlugin(kernel)],
  })

  async function execute(
    request: Request,
    method: 'GET' | 'POST',
    params: { query: string; variables?: Record<string, unknown>; operationName?: string; extensions?: Record<string, unknown> },
  ): Promise<Response> {
    const bytes = Buffer.byteLength(params.query)
    if (bytes > LIMITS.maxQueryBytes) throw KernelErrors.payloadTooLarge(`The query is ${Math.ceil(bytes / 1024)} KB; at most 100 KB is allowed.`)
    const info = ctx.requestInfo(request)
    const origin = publicOrigin(kernel.config, request.url)
    // yoga gets the parsed parameters as a JSON POST (the kernel read and checked the body already) with the
    // caller's headers, so resolvers see Accept-Language, the headers read steps read and the rest as sent.
    const headers = new Headers(request.headers)
    headers.delete('content-length')
    headers.set('content-type', 'application/json')
    headers.set('accept', 'application/json')
    const inner = new Request('http://graphql.internal/v1/graphql', { method: 'POST', headers, body: JSON.stringify(params) })
    const context = newContext(inner, info.id, info.ip, info.viaTrustedProxy, origin)
    const res = await yoga.fetch(inner, context as unknown as Record<string, unknown>)
    let text = await res.text()
    if (res.status >= 500) throw new Error(`graphql-yoga answered ${res.status}: ${text.slice(0, 200)}`)
    if (res.status >= 400 && operationNotFound(text)) {
      // The document has one operation (see checkOperationCount) and operationName names another: a GraphQL error in a
      // 200, like every other document that cannot run; yoga answers 400 here.
      text = JSON.stringify({ errors: [{ message: `Unknown operation named "${params.operationName}".`, extensions: { code: 'unknown_operation' } }] })
      context.outcome.errored = true
    } else if (res.status >= 400) {
      let message = 'The GraphQL request is not valid.'
      try {
        message = JSON.parse(text).errors?.[0]?.message ?? message
      } catch {}
      throw KernelErrors.validationFailed(message, { query: [message] })
    }
    if (method === 'GET' && context.outcome.executed && !context.outcome.errored) {
      return bodyAnswer(request, text, { cacheControl: cacheControlOf(context.hints, publicCache), vary })
    }
    return new Response(text, { status: 200, headers: { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store' } })
  }

  return new Elysia({ tags: ['GraphQL'] })
    .get(
      '/graphql',
      ({ request, query }) =>
        execute(request, 'GET', {
          query: query.query,
          variables: jsonParam('variables', query.variables),
          operationName: query.operationName || undefined,
          extensions: jsonParam('extensions', query.extensions),
        }),
      {
        query: GraphQLQuery,
        detail: {
          summary: 'GraphQL query over GET (cacheable)',
          description: `${ABOUT}\n\nA GET answer without errors carries \`ETag\` (If-None-Match → 304), \`Cache-Control\` like the public Story read (\`no-store\` when it includes search results, \`private\` when a personalised variant was served) and \`Vary: ${vary}\`.`,
          responses: { 200: RESULT_DOC, 304: { description: 'Not modified (If-None-Match matched the ETag)' } },
        },
      },
    )
    .post(
      '/graphql',
      ({ request, body }) =>
        execute(request, 'POST', {
          query: body.query,
          variables: body.variables ?? undefined,
          operationName: body.operationName ?? undefined,
          extensions: body.extensions ?? undefined,
        }),
      {
        body: GraphQLBody,
        detail: { summary: 'GraphQL query (read-only)', description: `${ABOUT}\n\nPOST answers are \`Cache-Control: no-store\`.`, responses: { 200: RESULT_DOC } },
      },
    )
    .get(
      '/graphql/schema.gql',
      ({ request }) => {
        return conditionalAnswer(request, sdlEtag, sdl, sdlHeaders.ok, sdlHeaders.notModified)
      },
      {
        detail: {
          summary: 'The GraphQL schema (SDL)',
          description: 'The printed schema of GET/POST /v1/graphql, sorted by name. 600 requests per minute per IP.',
          responses: {
            200: { description: 'The schema in GraphQL SDL', content: { 'text/plain': { schema: { type: 'string' } } } },
            304: { description: 'Not modified' },
          },
        },
      },
    )
}

/**
 * A small LRU keyed by a query text: at most `max` entries, and texts longer than `maxKeyBytes` are not kept
 * (`get` misses, `set` is a no-op). A Map keeps insertion order: a hit moves the entry to the end, the oldest goes first.
 */
export class TextLru<V> {
  private readonly map = new Map<string, V>()
  constructor(
    private readonly max: number = LIMITS.documentCacheEntries,
    private readonly maxKeyBytes: number = LIMITS.documentCacheMaxBytes,
  ) {}
  get(key: string): V | undefined {
    const v = this.map.get(key)
    if (v === undefined) return undefined
    this.map.delete(key)
    this.map.set(key, v)
    return v
  }
  set(key: string, value: V): void {
    // Characters bound bytes from below; a UTF-16 length over the bound is over it in UTF-8 too.
    if (key.length > this.maxKeyBytes || Buffer.byteLength(key) > this.maxKeyBytes) return
    this.map.delete(key)
    this.map.set(key, value)
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string)
  }
  get size(): number {
    return this.map.size
  }
}

/** Yoga's answer when `operationName` names no operation of the document (graphql-yoga's usePreventMutationViaGET). */
function operationNotFound(text: string): boolean {
  try {
    const errors = JSON.parse(text)?.errors
    return Array.isArray(errors) && errors.length === 1 && errors[0]?.extensions?.code === 'OPERATION_RESOLUTION_FAILURE'
  } catch {
    return false
  }
}
