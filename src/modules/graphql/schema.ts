import { type GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql'
import { createGraphQLBuilder, type GraphQLContribution } from '../../kernel/graphql'

/**
 * The read-only schema: the shared pieces (the `JSON` scalar and an empty Query type) and then every module's
 * contribution (kernel.graphql, collected by the runtime from the modules' `graphql` hooks) — this file names no
 * feature. There is no Mutation or Subscription type.
 */
export function buildSchema(contributions: readonly GraphQLContribution[]): { schema: GraphQLSchema; sdl: string } {
  const builder = createGraphQLBuilder()
  builder.scalarType('JSON', {
    description: 'Any JSON value: Story content, datasource references.',
    serialize: (v) => v,
    parseValue: (v) => v,
  })
  builder.queryType({ description: 'The read-only GraphQL API over the public read surface (published content only).' })
  for (const c of contributions) c.contribute(builder)
  // Sorted, so the printed schema (and the committed snapshot) does not depend on the module order.
  const schema = lexicographicSortSchema(builder.toSchema())
  return { schema, sdl: `${printSchema(schema)}\n` }
}
