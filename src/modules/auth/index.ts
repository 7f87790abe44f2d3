import { defineModule } from '../../kernel/module'
import { HOUR, MIN } from '../../kernel/rate-limit'
import { authEvents } from './events'
import { AuthErrors } from './model'
import { resetPageRoutes } from './reset-page'
import { authRoutes } from './routes'
import { type AuthState, mailPasswordReset, PASSWORD_RESET_QUEUE } from './service'
import './jobs'

/** Users, tenants and bearer tokens: register (REGISTRATION), login, me, logout (spec 4.1); password change and reset. */
export const authModule = defineModule({
  name: 'auth',
  // Modules below may admit addresses to sign up while REGISTRATION refuses walk-ins (pending invitations), and
  // refuse a login whose password was right (users of an ended pitch demo).
  setup: (): AuthState => ({ signUpAllowances: [], signInChecks: [] }),
  routes: ({ kernel, guards, self }) => authRoutes(kernel, guards, self),
  // A static page at the host root (no row: like the embed scripts it reads nothing; its form posts to a limited route).
  root: () => resetPageRoutes(),
  // Reset requests are answered at once and looked up here, so the answer's timing does not tell who has an account.
  jobs: (jobs, _self, kernel) => {
    jobs.define(PASSWORD_RESET_QUEUE, { handler: ({ job }) => mailPasswordReset(kernel, job.payload), retryDelaysMs: [30_000, 5 * 60_000] })
  },
  errors: Object.values(AuthErrors),
  events: authEvents,
  rateLimits: [
    { id: 'auth.login', method: 'POST', path: '/v1/auth/login', limit: 10, windowSeconds: HOUR },
    { id: 'auth.register', method: 'POST', path: '/v1/auth/register', limit: 5, windowSeconds: HOUR },
    { id: 'auth.logout', method: 'POST', path: '/v1/auth/logout', limit: 60, windowSeconds: MIN },
    { id: 'auth.me', method: 'GET', path: '/v1/auth/me', limit: 60, windowSeconds: MIN },
    // Guessing the current password with a stolen session costs as much as guessing it at login.
    { id: 'auth.password', method: 'POST', path: '/v1/auth/password', limit: 10, windowSeconds: HOUR },
    { id: 'auth.password-reset', method: 'POST', path: '/v1/auth/password-reset', limit: 5, windowSeconds: HOUR },
    { id: 'auth.password-reset.confirm', method: 'POST', path: '/v1/auth/password-reset/confirm', limit: 10, windowSeconds: HOUR },
  ],
  // A sign-up leaves no address in the request log (the hash, or nothing).
  privatePaths: ['/v1/auth/register'],
})
