import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import type { RequestInfo } from '../../kernel/request-front'
import { Data, ErrorBody } from '../../kernel/schemas'
import {
  ADMIN_SESSION_COOKIE,
  adminSessionCookie,
  adminSessionSetCookie,
  assertAdminSessionHeader,
  closeAdminSession,
  exchangeAdminSession,
  openAdminSession,
  reachedOverHttps,
} from './admin-session'
import {
  AdminSessionModel,
  AdminSessionTokenModel,
  LoginBody,
  MeModel,
  PasswordChangeBody,
  PasswordChangedModel,
  PasswordResetBody,
  PasswordResetRequestBody,
  PasswordResetRequestedModel,
  ProfileBody,
  SignedOutEverywhereModel,
  RegisterBody,
  RegisteredModel,
  SessionModel,
  SignUpAcceptedModel,
  SignUpConfirmBody,
  SignUpConfirmedModel,
} from './model'
import {
  type AuthState,
  assertRegistrationOpen,
  changePassword,
  confirmSignUp,
  describePrincipal,
  loginUser,
  logout,
  logoutEverywhere,
  registerUser,
  updateProfile,
  requestPasswordReset,
  resetPassword,
  signUpAccepted,
} from './service'

const RESET_REQUESTED = 'If an account uses this address, a mail with a link to choose a new password is on its way. The link works once, for one hour.'

export function authRoutes(kernel: Kernel, guards: Guards, state: AuthState, requestInfo: (request: Request) => RequestInfo) {
  return new Elysia({ prefix: '/auth', tags: ['Auth'] })
    .use(guards)
    .post(
      '/register',
      async ({ body, set }) => {
        const outcome = await registerUser(kernel, body, state)
        if (outcome.created) {
          set.status = 201
          return { data: outcome.session }
        }
        set.status = 202
        return { data: signUpAccepted(kernel) }
      },
      {
        // Before body validation: a closed door answers 403 whatever the body holds.
        transform: () => assertRegistrationOpen(kernel, state),
        body: RegisterBody,
        response: { 201: Data(RegisteredModel), 202: Data(SignUpAcceptedModel), 403: ErrorBody },
        detail: {
          summary: 'Sign up a User and its Tenant',
          description: [
            'Passwords need 8+ characters; e-mail addresses are unique, compared case-insensitively. REGISTRATION decides who may sign up: `open` (default) anyone; `first-user` only the first account of the service; `closed` nobody (accounts come from `content-service user create`); in both restricted modes an address a module admits (e.g. one with a pending invitation) may still sign up. A refused sign-up answers 403 `registration_closed`.',
            'The answer never tells whether the address has an account. The first account of the service is made at once: 201 with a session token. Every later sign-up answers 202 with the same body whatever the address: with REGISTRATION_VERIFY=on (default) a link is mailed to the address (`{PUBLIC_URL}/confirm-sign-up/{token}`, once, 24 hours) and the account exists only once it is followed (`POST /v1/auth/register/confirm`); with it off the account is made at once and the person signs in. An address that has an account gets a mail saying someone tried to sign up with it (a sign-in address and a one-hour reset link) and nothing changes. REGISTRATION_VERIFY=on needs PUBLIC_URL: without it, sign-ups past the first account answer 403 `registration_unavailable`. 5 per hour per IP; 3 mails per hour per address (over it: the same 202, no mail).',
          ].join(' '),
        },
      },
    )
    .post(
      '/register/confirm',
      async ({ body, set }) => {
        set.status = 201
        return { data: await confirmSignUp(kernel, state, body.token) }
      },
      {
        body: SignUpConfirmBody,
        response: { 201: Data(SignUpConfirmedModel), 403: ErrorBody, 409: ErrorBody, 422: ErrorBody },
        detail: {
          summary: 'Confirm a sign-up with the token from its mail: the account is made',
          description:
            'The token from the mailed link, in the body (not the URL, so it stays out of access logs). Good once and for 24 hours: otherwise 422 `sign_up_token_invalid`. Makes the User and its Tenant with the password chosen at sign-up (and, for an onboarding sign-up, its first Space and sample content: what fails there is a `warnings` entry). No token is returned: the person signs in. The address got an account meanwhile: 409 `email_taken`; the service closed to sign-up since: 403 `registration_closed`. 10 per hour per IP.',
        },
      },
    )
    .post(
      '/login',
      async ({ body, request, set }) => {
        const data = await loginUser(kernel, body, state)
        // Only failed sign-ins count against the per-IP limit: an office behind one address signs in as often as it likes.
        const ri = requestInfo(request)
        await kernel.rateLimiter.refundRequest(ri.rate, ri.ip)
        if (ri.rate) set.headers['RateLimit-Remaining'] = String(Math.min(ri.rate.rule.limit, ri.rate.remaining + 1))
        return { data }
      },
      {
        body: LoginBody,
        response: { 200: Data(SessionModel), 429: ErrorBody },
        detail: {
          summary: 'Exchange e-mail and password for a bearer token (valid USER_TOKEN_TTL_DAYS, default 30)',
          description:
            'Wrong address or password: 401 `invalid_credentials` (the same answer for both). Failed sign-ins are limited per IP (10 per hour; a successful one does not count) and per address, from any IP: after 5 failures within a day, one attempt per 1, 2, 4 … up to 60 minutes, others answer 429 `rate_limited` with Retry-After before the password is looked at, for every address alike. A password reset by mail lifts the per-address wait.',
        },
      },
    )
    .post(
      '/admin-session',
      async ({ principal, request, set }) => {
        const opened = await openAdminSession(kernel, principal, adminSessionCookie(request.headers.get('cookie')))
        set.headers['set-cookie'] = adminSessionSetCookie(opened.cookie, reachedOverHttps(kernel, request, requestInfo(request).viaTrustedProxy))
        set.headers['cache-control'] = 'no-store'
        set.status = 201
        return { data: opened.view }
      },
      {
        userToken: true,
        response: { 201: Data(AdminSessionModel), 403: ErrorBody },
        detail: {
          summary: "Open an admin session: every tab of this browser's admin app shares the sign-in",
          description: [
            `The admin app calls this right after \`POST /v1/auth/login\`, with the token it got. The answer sets the cookie \`${ADMIN_SESSION_COOKIE}\` (HttpOnly, SameSite=Strict, Path=/v1/auth/admin-session, Secure when the service is reached over https — PUBLIC_URL, the request or a trusted proxy's X-Forwarded-Proto — and without it on plain http such as http://localhost): script in the page cannot read it and no other request carries it.`,
            'The cookie is never authentication: no route but `POST /v1/auth/admin-session/token` reads it. The session lasts 14 days after its last exchange, never beyond 90 days after sign-in; it is stored hashed. A cookie of an earlier session of the same user sent along is ended (a new sign-in replaces it).',
            'Needs the token of a sign-in: a Space token answers 403 `user_required`, a token minted from an admin session 403 `admin_session_refused`. Signing out with the token (`POST /v1/auth/logout`), signing out everywhere, a password reset and a password change (for other sessions) end the session.',
          ].join(' '),
        },
      },
    )
    .post(
      '/admin-session/token',
      async ({ request, set }) => {
        assertAdminSessionHeader(request)
        const { view, sessionExpiresAt } = await exchangeAdminSession(kernel, adminSessionCookie(request.headers.get('cookie')))
        const secure = reachedOverHttps(kernel, request, requestInfo(request).viaTrustedProxy)
        // The cookie is set again with the session's new end (Max-Age slides with it).
        const cookie = adminSessionCookie(request.headers.get('cookie'))!
        set.headers['set-cookie'] = adminSessionSetCookie(cookie, secure, sessionExpiresAt.getTime() - kernel.clock.ms())
        set.headers['cache-control'] = 'no-store'
        return { data: view }
      },
      {
        response: { 200: Data(AdminSessionTokenModel), 401: ErrorBody, 403: ErrorBody },
        detail: {
          summary: 'Trade the admin session cookie for a bearer token of 15 minutes',
          description: [
            `For the admin app: a tab without a token sends the cookie \`${ADMIN_SESSION_COOKIE}\` (set by \`POST /v1/auth/admin-session\`) and the header \`X-Admin-Session: 1\`, and gets a user token of 15 minutes (renewed the same way before it runs out). No bearer token is needed or read.`,
            'Without the header: 403 `admin_session_header_required` (a cross-site form cannot send it; cross-origin script cannot without a preflight, and the service allows no such header cross-origin). A missing, malformed, unknown, expired or signed-out cookie: 401 `unauthorized`. Each exchange moves the session\'s end to 14 days later (never beyond 90 days after sign-in). 60 per minute per IP.',
          ].join(' '),
          security: [],
        },
      },
    )
    .delete(
      '/admin-session',
      async ({ request, set }) => {
        assertAdminSessionHeader(request)
        await closeAdminSession(kernel, adminSessionCookie(request.headers.get('cookie')))
        set.headers['set-cookie'] = adminSessionSetCookie(null, reachedOverHttps(kernel, request, requestInfo(request).viaTrustedProxy))
        set.status = 204
      },
      {
        response: { 204: t.Void(), 403: ErrorBody },
        detail: {
          summary: "Sign this browser's admin out: end the admin session of the cookie and clear the cookie",
          description:
            'The admin app calls this when signing out (besides `POST /v1/auth/logout`). Deletes the session of the cookie sent along and revokes the tokens minted from it, so every tab of the browser is signed out; always 204 (no cookie, or one of no session: nothing to end), with a Set-Cookie that clears the cookie. Needs the header `X-Admin-Session: 1` (403 `admin_session_header_required`).',
          security: [],
        },
      },
    )
    .get('/me', async ({ principal }) => ({ data: await describePrincipal(kernel, principal) }), {
      authenticated: true,
      response: Data(MeModel),
      detail: { summary: 'The authenticated user and token (a Space-scoped token acts for its Space: user fields are null)' },
    })
    .patch('/me', async ({ principal, body }) => ({ data: await updateProfile(kernel, principal, body) }), {
      userToken: true,
      body: ProfileBody,
      response: { 200: Data(MeModel), 422: ErrorBody },
      detail: {
        summary: "Change the signed-in user's profile: name, the admin app's language and theme",
        description:
          'Needs a user token (a Space token: 403). Each field given is changed, the others stay; `ui_language` and `ui_theme` null go back to the browser\'s and the system\'s. Answers the user as `GET /v1/auth/me` does. A bad value: 422 naming the field.',
      },
    })
    .post(
      '/logout-everywhere',
      async ({ principal }) => ({ data: await logoutEverywhere(kernel, principal) }),
      {
        userToken: true,
        response: { 200: Data(SignedOutEverywhereModel) },
        detail: {
          summary: 'Sign out every login session of the signed-in user, this one included',
          description:
            'Every user token of the user stops working at once (their open live streams end); Space-scoped API tokens are not touched, as they belong to their Space. Needs a user token (a Space token: 403).',
        },
      },
    )
    .post(
      '/logout',
      async ({ principal, set }) => {
        await logout(kernel, principal)
        set.status = 204
      },
      { authenticated: true, response: { 204: t.Void() }, detail: { summary: 'Revoke the token of this request' } },
    )
    .post('/password', async ({ principal, body }) => ({ data: await changePassword(kernel, principal, body) }), {
      userToken: true,
      body: PasswordChangeBody,
      response: { 200: Data(PasswordChangedModel), 422: ErrorBody },
      detail: {
        summary: 'Change the password of the signed-in user',
        description:
          'Needs a user token and the current password (wrong: 422 `wrong_password`, naming `current_password`). Every other login session of the user is signed out; the token of this request stays valid. Space-scoped API tokens are not touched. Open password-reset links stop working.',
      },
    })
    .post(
      '/password-reset',
      async ({ body, set }) => {
        await requestPasswordReset(kernel, body)
        set.status = 202
        return { data: { message: RESET_REQUESTED } }
      },
      {
        body: PasswordResetRequestBody,
        response: { 202: Data(PasswordResetRequestedModel), 403: ErrorBody, 429: ErrorBody },
        detail: {
          summary: 'Mail a password-reset link',
          description:
            'Always 202 with the same body, whether or not the address has an account. When it has, a mail carries the link `{PUBLIC_URL}/reset-password/{token}` (one hour, single use). Needs PUBLIC_URL (never the request\'s Host, which a client can forge): without it 403 `password_reset_unavailable` for every address. Limited to 5 requests per hour per IP (429) and 3 mails per hour per address (over it: still 202, no mail).',
        },
      },
    )
    .post('/password-reset/confirm', async ({ body }) => ({ data: await resetPassword(kernel, body, state) }), {
      body: PasswordResetBody,
      response: { 200: Data(PasswordChangedModel), 422: ErrorBody, 429: ErrorBody },
      detail: {
        summary: 'Set a new password with a reset token',
        description:
          'The token from the mailed link, in the body (not the URL, so it stays out of access logs). Good once and for one hour: otherwise 422 `reset_token_invalid`. Every login session of the user is signed out; the user then logs in with the new password, and the per-address sign-in wait is lifted. 10 per hour per IP, 5 per hour per account (429).',
      },
    })
}
