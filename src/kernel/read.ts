import { validationFailed } from './errors'
import type { FieldMap } from '@pothos/core'
import type { TProperties } from '@sinclair/typebox'
import type { GraphQLTypes } from './graphql'

/**
 * The contract of the public Story read's extension steps (spec 4.5). The stories module owns the pipeline
 *
 *   resolve Space → locale chain → published snapshot → steps' select → [cached body?] → steps' transform → render
 *
 * and knows no feature by name: personalisation, datasource markers and the beacon URL are steps contributed by
 * their modules (`readSteps` in the module definition), run in module-list order.
 *
 * A step has two halves:
 * - `select` runs on every request and must be cheap: it reads request signals and records its decision as render-key
 *   parts (`keyParts`) and, when the response must differ per request, response headers or Cache-Control. Equal key
 *   parts ⇒ equal body. When it can decide from memory it must not return a Promise: then the whole read stays
 *   synchronous and cached reads take the fast path (no Elysia, no await).
 * - `transform` runs only when no body is cached for that key: it may rewrite the content and adds its `meta` entries.
 *
 * A step also declares what it adds to the public shape of the read, once, at start-up (`meta`, `description`): the
 * stories module builds the public Story model (OpenAPI), the GraphQL `StoryMeta` type and the read's description from
 * what the registered steps declare, so it names none of their entries. Nothing of it runs per request.
 */

export interface ReadRequest {
  spaceSlug: string
  /** `{path}`: the full path without its leading slash, as it came in the URL. */
  rawPath: string
  /** `?lang`, when given. */
  lang: string | undefined
  acceptLanguage: string | null
  /** Base of absolute URLs (PUBLIC_URL or the request's origin). */
  origin: string
  request: Request
  /** The client address (after trusted proxies). */
  clientIp: string
  /** Whether the socket peer is one of TRUSTED_PROXIES (so edge headers such as a country code can be believed). */
  viaTrustedProxy: boolean
  /** `?version=draft` with a Space token: drafts, never cached. */
  preview: boolean
}

/** The Space being read from, as the public read caches it. */
export interface ReadSpace {
  id: number
  slug: string
  name: string
  defaultLang: string
  codes: string[]
}

/** The Story being read. */
export interface ReadStory {
  id: number
  uuid: string
  slug: string
  fullPath: string
}

export interface ReadContext {
  readonly req: ReadRequest
  readonly space: ReadSpace
  readonly story: ReadStory
  /** The locale being served (chosen before the steps run; a step cannot change it). */
  readonly lang: string
  /** Every decision that changes the body (content or meta) must be pushed here: it keys the cached body. */
  keyParts: string[]
  /** Extra response headers of this request (not cached with the body), e.g. X-Service-Segment. */
  headers: Record<string, string> | null
  /** Replaces the Cache-Control of this response (e.g. `private` when it depends on per-visitor signals). */
  cacheControl: string | null
  /** Decisions a step passes from its `select` to its `transform`, keyed by step name. */
  decisions: Record<string, unknown>
}

export interface RenderDraft {
  /** The content as JSON text; a transforming step parses it, edits and stores it back. */
  contentJson: string
  /** `meta` entries of the response, in step order. */
  meta: Record<string, unknown>
  /**
   * Set to false by a step whose output reflects a passing failure (a datasource that could not be loaded): the body
   * is served but not cached under its render key, so the next read tries again.
   */
  cacheable?: boolean
}

/** A served Story's `meta` object as GraphQL resolves it: the entries the steps' `transform` wrote, by key. */
export type StoryMeta = Record<string, unknown>

/**
 * The `meta` entries a step's `transform` writes, declared for the public surfaces. Keys are unique across steps (the
 * stories module refuses a duplicate at start-up); the OpenAPI properties and GraphQL fields follow step (module-list)
 * order, as the entries do in the body. Both are built once, when the routes and the GraphQL schema are.
 */
export interface ReadStepMeta {
  /**
   * The entries as TypeBox properties of the public Story model's `meta` object (`GET /cdn/{space}/stories/{path}` in
   * the OpenAPI description), e.g. `{served_segment: t.Union([t.String(), t.Null()], {description})}`. An entry the
   * step may leave out is `t.Optional`. Declared whatever the configuration (a disabled step still documents it).
   */
  schema: TProperties
  /**
   * The same entries as fields of the GraphQL `StoryMeta` type: `(t) => ({served_segment: t.string({nullable: true,
   * resolve: (m) => ...})})`, where `m` is the served body's `meta` object (values `unknown`: narrow them).
   */
  graphql(t: PothosSchemaTypes.ObjectFieldBuilder<GraphQLTypes, StoryMeta>): FieldMap
}

/**
 * A request header a step's `select` decides on and a shared cache may key on (it then goes into `Vary`), e.g. the
 * segments module's `X-Service-Segment`. Headers that make the answer per-visitor (a cookie) are not declared: the step
 * makes such an answer `private` instead.
 */
export interface ReadStepHeader {
  /** The header as sent, e.g. `X-Service-Segment`. */
  name: string
  /**
   * The argument of the public GraphQL reads that stands in for the header (the header's value when given), e.g.
   * `segment`; none when absent.
   */
  argument?: {
    name: string
    description: string
    /** Checks a given value: an error message (GraphQL `validation_failed` on the argument), or null when valid. */
    check(value: string): string | null
  }
}

export interface ReadStep {
  name: string
  /**
   * The request headers this step's `select` reads (see ReadStepHeader): the read's `Vary` (`readVary`), the GraphQL
   * arguments standing in for them (`readArguments`), and whatever else keys on them (the overlay's memo) come from
   * these declarations, so no other module names the header.
   */
  headers?: ReadStepHeader[]
  /** The `meta` entries this step's `transform` writes (see ReadStepMeta); none when absent. */
  meta?: ReadStepMeta
  /**
   * What the step does to the read, in sentences appended (in step order, after the stories module's own) to the
   * OpenAPI description of `GET /cdn/{space}/stories/{path}`.
   */
  description?: string
  select?(ctx: ReadContext): void | Promise<void>
  transform?(ctx: ReadContext, draft: RenderDraft): void | Promise<void>
  /**
   * Lets the fast path memoise the whole read of a URL (src/modules/stories/read-memo.ts): what of the request, beyond
   * its URL and Accept-Language, this step's `select` decides on in `space` — '' for nothing — or null when the
   * decision cannot be memoised for this request (it then runs in full). Called only while `select` would decide from
   * memory. A step with `select` and no `vary` turns the memo off. Anything else a decision depends on (in-memory
   * state such as a Space's segments or a datasource revision) must change only in `on` handlers, synchronously: the
   * memo is dropped on every event the bus delivers.
   */
  vary?(request: Request, space: ReadSpace, viaTrustedProxy: boolean): string | null
}

/** `Vary` of a read the steps decide: Accept-Language (the locale chain), then the headers the steps declare. */
export function readVary(steps: readonly ReadStep[]): string {
  const names = ['Accept-Language']
  for (const s of steps) for (const h of s.headers ?? []) if (!names.some((n) => n.toLowerCase() === h.name.toLowerCase())) names.push(h.name)
  return names.join(', ')
}

/** The declared headers that have a GraphQL argument standing in for them, in step order. */
export function readArguments(steps: readonly ReadStep[]): (ReadStepHeader & { argument: NonNullable<ReadStepHeader['argument']> })[] {
  return steps.flatMap((s) => (s.headers ?? []).filter((h): h is ReadStepHeader & { argument: NonNullable<ReadStepHeader['argument']> } => !!h.argument))
}

/** The declared request headers, lower-cased, in step order (for keys of memoised reads). */
export function readHeaderNames(steps: readonly ReadStep[]): string[] {
  const out: string[] = []
  for (const s of steps) for (const h of s.headers ?? []) if (!out.includes(h.name.toLowerCase())) out.push(h.name.toLowerCase())
  return out
}

/**
 * The values of the declared headers' GraphQL arguments given in `args`, checked (422 `validation_failed` naming the
 * argument), as [header, value] pairs in step order; empty when none is given.
 */
export function argumentHeaders(steps: readonly ReadStep[], args: Record<string, unknown>): [string, string][] {
  const out: [string, string][] = []
  for (const h of readArguments(steps)) {
    const v = args[h.argument.name]
    if (v === undefined || v === null) continue
    const error = typeof v === 'string' ? h.argument.check(v) : 'must be a string'
    if (error) throw validationFailed({ [h.argument.name]: [error] })
    out.push([h.name, v as string])
  }
  return out
}

/** `request` with the given headers set (a copy; the request itself when there are none). */
export function requestWithHeaders(request: Request, pairs: readonly [string, string][]): Request {
  if (!pairs.length) return request
  const headers = new Headers(request.headers)
  for (const [k, v] of pairs) headers.set(k, v)
  return new Request(request.url, { headers })
}
