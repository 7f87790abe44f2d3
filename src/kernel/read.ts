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

export interface ReadStep {
  name: string
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
