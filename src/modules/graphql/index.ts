import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { graphqlRoutes } from './routes'

/**
 * The read-only GraphQL endpoint (spec 1 surface 3, 4.7): graphql-yoga inside the Elysia app, a Pothos schema built
 * from the fields the other modules contribute (their `graphql` hooks, kernel/graphql.ts). Owns no tables and names
 * no feature: the fields and their resolvers live with the modules that own the data.
 */
export const graphqlModule = defineModule({
  name: 'graphql',
  publicRoutes: (ctx) => graphqlRoutes(ctx),
  publicCors: { paths: ['/v1/graphql'] },
  rateLimits: [
    // 4.7
    { id: 'graphql.post', method: 'POST', path: '/v1/graphql', limit: 600, windowSeconds: MIN },
    { id: 'graphql.get', method: 'GET', path: '/v1/graphql', limit: 600, windowSeconds: MIN },
    { id: 'graphql.schema', method: 'GET', path: '/v1/graphql/schema.gql', limit: 600, windowSeconds: MIN },
  ],
})
