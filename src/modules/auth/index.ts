import { defineModule } from '../../kernel/module'
import { HOUR, MIN } from '../../kernel/rate-limit'
import { authEvents } from './events'
import { AuthErrors } from './model'
import { confirmPageRoutes } from './confirm-page'
import { resetPageRoutes } from './reset-page'
import { authRoutes } from './routes'
import { pruneAdminSessions } from './admin-session'
import { type AuthState, mailPasswordReset, newAuthState, PASSWORD_RESET_QUEUE, prunePendingSignUps, SIGN_UP_PRUNE_QUEUE } from './service'
import './jobs'

/** Users, tenants and bearer tokens: register (REGISTRATION), login, me, logout (spec 4.1); password change and reset. */
export const authModule = defineModule({
  name: 'auth',
  // Modules below may admit addresses to sign up while REGISTRATION refuses walk-ins (pending invitations), refuse a
  // login whose password was right (users of an ended pitch demo), make more with an account at sign-up (onboarding's
  // first Space) and hear of password resets (releasing an ended demo's account).
  setup: (): AuthState => newAuthState(),
  routes: ({ kernel, guards, self, requestInfo }) => authRoutes(kernel, guards, self, requestInfo),
  // Static pages at the host root (no row: like the embed scripts they read nothing; their forms post to limited routes).
  root: () => resetPageRoutes().use(confirmPageRoutes()),
  // Reset requests are answered at once and looked up here, so the answer's timing does not tell who has an account.
  jobs: (jobs, _self, kernel) => {
    jobs.define(PASSWORD_RESET_QUEUE, { handler: ({ job }) => mailPasswordReset(kernel, job.payload), retryDelaysMs: [30_000, 5 * 60_000] })
    jobs.define(SIGN_UP_PRUNE_QUEUE, {
      handler: async () => {
        await prunePendingSignUps(kernel)
        await pruneAdminSessions(kernel)
      },
    })
    jobs.schedule({ name: SIGN_UP_PRUNE_QUEUE, cron: '17 4 * * *', queue: SIGN_UP_PRUNE_QUEUE, payload: {} })
  },
  errors: Object.values(AuthErrors),
  events: authEvents,
  rateLimits: [
    // Failed sign-ins only: the route gives a successful one back (and counts failures per address too).
    { id: 'auth.login', method: 'POST', path: '/v1/auth/login', limit: 10, windowSeconds: HOUR },
    { id: 'auth.register.confirm', method: 'POST', path: '/v1/auth/register/confirm', limit: 10, windowSeconds: HOUR },
    { id: 'auth.register', method: 'POST', path: '/v1/auth/register', limit: 5, windowSeconds: HOUR },
    { id: 'auth.logout', method: 'POST', path: '/v1/auth/logout', limit: 60, windowSeconds: MIN },
    { id: 'auth.me', method: 'GET', path: '/v1/auth/me', limit: 60, windowSeconds: MIN },
    { id: 'auth.me.update', method: 'PATCH', path: '/v1/auth/me', limit: 60, windowSeconds: MIN },
    { id: 'auth.admin-session', method: 'POST', path: '/v1/auth/admin-session', limit: 30, windowSeconds: MIN },
    { id: 'auth.admin-session.token', method: 'POST', path: '/v1/auth/admin-session/token', limit: 60, windowSeconds: MIN },
    { id: 'auth.admin-session.end', method: 'DELETE', path: '/v1/auth/admin-session', limit: 60, windowSeconds: MIN },
    { id: 'auth.logout-everywhere', method: 'POST', path: '/v1/auth/logout-everywhere', limit: 10, windowSeconds: MIN },
    // Guessing the current password with a stolen session costs as much as guessing it at login.
    { id: 'auth.password', method: 'POST', path: '/v1/auth/password', limit: 10, windowSeconds: HOUR },
    { id: 'auth.password-reset', method: 'POST', path: '/v1/auth/password-reset', limit: 5, windowSeconds: HOUR },
    { id: 'auth.password-reset.confirm', method: 'POST', path: '/v1/auth/password-reset/confirm', limit: 10, windowSeconds: HOUR },
  ],
  // A sign-up leaves no address in the request log (the hash, or nothing).
  privatePaths: ['/v1/auth/register'],
})
