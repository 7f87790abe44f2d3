import { defineModule } from '../../kernel/module'
import { HOUR, MIN } from '../../kernel/rate-limit'
import { AuthErrors } from './model'
import { authRoutes } from './routes'

/** Users, tenants and bearer tokens: register, login, me, logout (spec 4.1). */
export const authModule = defineModule({
  name: 'auth',
  routes: ({ kernel, guards }) => authRoutes(kernel, guards),
  errors: Object.values(AuthErrors),
  rateLimits: [
    { id: 'auth.login', method: 'POST', path: '/v1/auth/login', limit: 10, windowSeconds: HOUR },
    { id: 'auth.register', method: 'POST', path: '/v1/auth/register', limit: 5, windowSeconds: HOUR },
    { id: 'auth.logout', method: 'POST', path: '/v1/auth/logout', limit: 60, windowSeconds: MIN },
    { id: 'auth.me', method: 'GET', path: '/v1/auth/me', limit: 60, windowSeconds: MIN },
  ],
  // A sign-up leaves no address in the request log (the hash, or nothing).
  privatePaths: ['/v1/auth/register'],
})
