import { Type } from '@sinclair/typebox'
import { type TSchema, t } from 'elysia'
import toRegexRange from 'to-regex-range'

/**
 * The schemas every module shares: path parameters, paging, timestamps and the error body. One definition each, so
 * limits and messages agree across routes and the OpenAPI description.
 *
 * Path parameters: a malformed value answers 404 (an id that cannot exist names nothing), never a database error.
 * Query values: a malformed one answers 422 naming the parameter.
 */

/**
 * A JSON integer, strictly: Elysia's own `t.Integer` also accepts numeric strings ("1") and carries a default, which
 * makes Elysia fill in and coerce request bodies. Use this one in every schema.
 */
export const Int = (opts: Parameters<typeof Type.Integer>[0] = {}) => Type.Integer(opts)

/**
 * One of a fixed set of strings, with no default: Elysia's `t.UnionEnum` defaults to its first value, which would
 * fill in a missing required field (a bulk request without `action` would publish).
 */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T, opts: { error?: string; description?: string } = {}) => {
  const schema = t.UnionEnum(values, opts)
  delete (schema as { default?: unknown }).default
  return schema
}

export const SPACE_SLUG_PATTERN = '^[a-z][a-z0-9-]{0,63}$'
const SPACE_SLUG_RE = new RegExp(SPACE_SLUG_PATTERN)
export const isSpaceSlug = (s: string) => typeof s === 'string' && SPACE_SLUG_RE.test(s)

/** `{space}`: spec 1, `^[a-z][a-z0-9-]*$`, at most 64 characters. */
export const SpaceSlug = t.String({ pattern: SPACE_SLUG_PATTERN, description: 'Space slug: ^[a-z][a-z0-9-]*$, at most 64 characters' })

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
const UUID_RE = new RegExp(UUID_PATTERN)
export const isUuid = (s: string) => UUID_RE.test(s)
export const Uuid = t.String({ format: 'uuid', pattern: UUID_PATTERN, error: 'must be a uuid' })

/** The key under which intString() keeps its bounds for the OpenAPI description (validation ignores it). */
export const INT_PARAM = 'x-integer'

/**
 * An integer in a path or query string, `min`…`max`, decimal digits only (no sign, exponent, fraction or leading
 * zero). Checked as a string pattern — so a bad value is reported under its own name (path: 404, query: 422) — and
 * handed to the route as a number. The OpenAPI description publishes it as what it is, `type: integer` with its
 * bounds (`INT_PARAM`, read by src/openapi.ts): a typed client sends `per_page: 20`, the wire form is text either way.
 */
export const intString = (min: number, max: number, opts: { description?: string; error?: string } = {}) =>
  t
    .Transform(
      t.String({
        pattern: `^(?:${toRegexRange(min, max)})$`,
        error: opts.error ?? `must be an integer from ${min} to ${max}`,
        description: opts.description ?? `An integer from ${min} to ${max}`,
        [INT_PARAM]: { minimum: min, maximum: max },
      }),
    )
    .Decode((v) => Number(v))
    .Encode((v) => String(v))

/** A positive int32 path id (serial columns): `1`…`2147483647`. */
export const IntId = intString(1, 2_147_483_647, { description: 'Positive integer id' })

export const SpaceParams = t.Object({ space: SpaceSlug })
export const SpaceUuidParams = t.Object({ space: SpaceSlug, uuid: Uuid })

/** Timestamps are ISO 8601 UTC strings (spec 1). */
export const Timestamp = t.String({ format: 'date-time' })
export const NullableTimestamp = t.Union([Timestamp, t.Null()])

/** A page number, from 1. */
export const PageNo = intString(1, 1_000_000, { description: 'Page number, from 1 (default 1)' })

/** `per_page` of a listing: 1…max, integers only. */
export const perPage = (max: number, def: number) => intString(1, max, { description: `Items per page, 1 to ${max} (default ${def})` })

/** `{page?, per_page?}` with the given default and maximum page size. */
export const pageQuery = (max = 100, def = 25) => t.Object({ page: t.Optional(PageNo), per_page: t.Optional(perPage(max, def)) })

/** `meta` of a paginated listing. */
export const PageMeta = t.Object({ total: Int(), page: Int(), per_page: Int() })

/**
 * The one error body (spec 7): `{error, message, errors?}`; a 500 carries `request_id`. The OpenAPI description keeps
 * it once, as `#/components/schemas/ErrorBody`, and refers to it wherever a route names it (src/openapi.ts).
 */
export const ErrorBody = t.Object(
  {
    error: t.String({ description: 'Machine code, e.g. validation_failed' }),
    message: t.String({ description: 'A sentence for people' }),
    errors: t.Optional(t.Record(t.String(), t.Array(t.String()), { description: 'Messages per field (422), keyed by the field path' })),
    details: t.Optional(
      t.Record(t.String(), t.Unknown(), { description: 'Facts of the error beyond its code, e.g. with 402 plan_limit: {limit, value, usage}' }),
    ),
    request_id: t.Optional(t.String({ description: 'With 500: the id to quote; the server log has the details' })),
  },
  { title: 'ErrorBody' },
)

/** `{data: T}`: every single-item answer of the management API. */
export const Data = <T extends TSchema>(schema: T) => t.Object({ data: schema })
/** `{data: T[]}`. */
export const DataList = <T extends TSchema>(schema: T) => t.Object({ data: t.Array(schema) })
/** `{data: T[], meta: {total, page, per_page}}`. */
export const Paged = <T extends TSchema>(schema: T) => t.Object({ data: t.Array(schema), meta: PageMeta })

/**
 * The honeypot of public forms (spec 4.6): a JSON body whose `_hp` holds anything (absent, null and "" are empty) came
 * from a bot. Public routes that take `_hp` check it in their `transform` hook — after the body is parsed, before it
 * is validated or the Space, form or event is looked up — so a bot that fills `_hp` and sends invalid data gets the
 * same quiet success as one that sends valid data, and never learns the trap from a 422 or a 404.
 */
export function honeypotFilled(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false
  const v = (body as Record<string, unknown>)._hp
  return v !== undefined && v !== null && v !== ''
}

type HoneypotHook = (ctx: { body: unknown; set: { headers: Record<string, unknown> } }) => void

/**
 * A route's `transform` hook that answers `status` with `answer` (and `Cache-Control: no-store`) when the honeypot is
 * filled. Elysia runs `transform` after the body is parsed and before it is validated or any guard runs, and answers
 * with a status response the hook returns (its types say the hook returns nothing, hence the cast).
 */
export function honeypotFirst(status: number, answer: unknown): HoneypotHook {
  return ((ctx: { body: unknown; set: { headers: Record<string, unknown> }; status: (code: number, body: unknown) => unknown }) => {
    if (!honeypotFilled(ctx.body)) return
    ctx.set.headers['cache-control'] = 'no-store'
    return ctx.status(status, answer)
  }) as HoneypotHook
}
