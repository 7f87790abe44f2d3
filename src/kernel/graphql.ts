import SchemaBuilder from '@pothos/core'
import DataLoader from 'dataloader'
import { validationFailed } from './errors'

/**
 * The contract of the read-only GraphQL schema (src/modules/graphql). The graphql module owns the endpoint, the
 * limits and the shared pieces (the `JSON` scalar, the Query type); every other module contributes its own fields
 * from its own folder through the module hook `graphql(builder, self, kernel)` — the runtime collects those hooks into
 * `kernel.graphql` the way it collects read steps, and the graphql module calls them when it builds the schema. So a
 * module adds fields without the graphql module naming it.
 *
 * Rules for contributors:
 * - Resolvers call the module's own services (the same functions REST uses), never another module's tables.
 * - Lists take `page` and `perPage` arguments; `perPage` must declare a `defaultValue` and be bounded by the resolver:
 *   the cost limit multiplies a list field's selection by its `perPage` (src/modules/graphql/limits.ts). Check both
 *   with `pageArgs` (one rule and one message for every list).
 * - Anything a resolver serves that must not be cached by shared caches calls `ctx.cacheHint('no-store')` (or a
 *   `private, ...` value); published content needs nothing (GET answers then carry the public read's Cache-Control).
 * - Batch per-item loads with `ctx.loader(name, batchFn)`: one DataLoader per request and name.
 * - Throw AppErrors (defineError) for bad input: they reach the client as GraphQL errors with `extensions.code`; any
 *   other error is masked ("Something went wrong on our side.") with the request id, like a REST 500. Key the
 *   fields of a 422 by the GraphQL argument (`perPage`): check the arguments in the resolver rather than passing on
 *   a service's REST-named error (`per_page`).
 */

/** What every resolver gets as its context: the request as the kernel saw it, per-request loaders and cache hints. */
export interface GraphQLContext {
  /** The incoming HTTP request (its headers: Accept-Language, X-Service-Segment, a country header, ...). */
  request: Request
  requestId: string
  /** The client address, after trusted proxies. */
  clientIp: string
  viaTrustedProxy: boolean
  /** Base of absolute URLs: PUBLIC_URL or the request's origin. */
  origin: string
  /** The DataLoader of this request under `name` (created on first use with `batch`). */
  loader<K, V>(name: string, batch: DataLoader.BatchLoadFn<K, V>, options?: DataLoader.Options<K, V, string>): DataLoader<K, V, string>
  /** Records the Cache-Control a served value needs (`no-store`, `private, ...`); the strictest one wins. */
  cacheHint(cacheControl: string): void
}

export interface GraphQLSchemaTypes {
  Context: GraphQLContext
  /** Fields are non-null unless they say `nullable: true`. */
  DefaultFieldNullability: false
  Scalars: {
    /** Any JSON value (Story content, datasource refs). */
    JSON: { Input: unknown; Output: unknown }
  }
}

/** The schema types with Pothos's defaults filled in (what field builders of this schema are typed with). */
export type GraphQLTypes = PothosSchemaTypes.ExtendDefaultTypes<GraphQLSchemaTypes>

export type GraphQLBuilder = PothosSchemaTypes.SchemaBuilder<GraphQLTypes>

export function createGraphQLBuilder(): GraphQLBuilder {
  return new SchemaBuilder<GraphQLSchemaTypes>({ defaultFieldNullability: false })
}

/** A module's contribution, as the runtime records it (the module's state and kernel already bound). */
export interface GraphQLContribution {
  module: string
  contribute(builder: GraphQLBuilder): void
}

export { DataLoader }

/** The highest `page` a list takes: deeper paging is a scan, not a page. */
export const GRAPHQL_MAX_PAGE = 100_000

/**
 * A list's `page` and `perPage` arguments checked the one way every list checks them: `page` 1 to GRAPHQL_MAX_PAGE
 * (default 1), `perPage` 1 to `bounds.max` (default `bounds.perPage`). A bad value is a 422 keyed by the argument's
 * GraphQL name.
 */
export function pageArgs(
  args: { page?: number | null; perPage?: number | null },
  bounds: { perPage: number; max: number },
): { page: number; perPage: number } {
  const page = args.page ?? 1
  const perPage = args.perPage ?? bounds.perPage
  if (!Number.isInteger(page) || page < 1 || page > GRAPHQL_MAX_PAGE) {
    throw validationFailed({ page: [`must be an integer from 1 to ${GRAPHQL_MAX_PAGE}`] })
  }
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > bounds.max) {
    throw validationFailed({ perPage: [`must be an integer from 1 to ${bounds.max}`] })
  }
  return { page, perPage }
}
