import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/plugin'
import { Data, ErrorBody } from '../../kernel/schemas'
import {
  LoginBody,
  MeModel,
  PasswordChangeBody,
  PasswordChangedModel,
  PasswordResetBody,
  PasswordResetRequestBody,
  PasswordResetRequestedModel,
  RegisterBody,
  RegisteredModel,
  SessionModel,
} from './model'
import {
  type AuthState,
  assertRegistrationOpen,
  changePassword,
  describePrincipal,
  loginUser,
  logout,
  registerUser,
  requestPasswordReset,
  resetPassword,
} from './service'

const RESET_REQUESTED = 'If an account uses this address, a mail with a link to choose a new password is on its way. The link works once, for one hour.'

export function authRoutes(kernel: Kernel, guards: Guards, state: AuthState) {
  return new Elysia({ prefix: '/auth', tags: ['Auth'] })
    .use(guards)
    .post(
      '/register',
      async ({ body, set }) => {
        set.status = 201
        return { data: await registerUser(kernel, body, state) }
      },
      {
        // Before body validation: a closed door answers 403 whatever the body holds.
        transform: () => assertRegistrationOpen(kernel, state),
        body: RegisterBody,
        response: { 201: Data(RegisteredModel), 403: ErrorBody },
        detail: {
          summary: 'Sign up a User and its Tenant',
          description:
            'Passwords need 8+ characters; e-mail addresses are unique, compared case-insensitively. REGISTRATION decides who may sign up: `open` (default) anyone; `first-user` only the first account of the service; `closed` nobody (accounts come from `content-service user create`); in both restricted modes an address a module admits (e.g. one with a pending invitation) may still sign up. A refused sign-up answers 403 `registration_closed`.',
        },
      },
    )
    .post('/login', async ({ body }) => ({ data: await loginUser(kernel, body, state) }), {
      body: LoginBody,
      response: Data(SessionModel),
      detail: { summary: 'Exchange e-mail and password for a bearer token (valid USER_TOKEN_TTL_DAYS, default 30)' },
    })
    .get('/me', async ({ principal }) => ({ data: await describePrincipal(kernel, principal) }), {
      authenticated: true,
      response: Data(MeModel),
      detail: { summary: 'The authenticated user and token (a Space-scoped token acts for its Space: user fields are null)' },
    })
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
    .post('/password-reset/confirm', async ({ body }) => ({ data: await resetPassword(kernel, body) }), {
      body: PasswordResetBody,
      response: { 200: Data(PasswordChangedModel), 422: ErrorBody, 429: ErrorBody },
      detail: {
        summary: 'Set a new password with a reset token',
        description:
          'The token from the mailed link, in the body (not the URL, so it stays out of access logs). Good once and for one hour: otherwise 422 `reset_token_invalid`. Every login session of the user is signed out; the user then logs in with the new password.',
      },
    })
}
