import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/plugin'
import { Data } from '../../kernel/schemas'
import { LoginBody, MeModel, RegisterBody, RegisteredModel, SessionModel } from './model'
import { describePrincipal, loginUser, logout, registerUser } from './service'

export function authRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/auth', tags: ['Auth'] })
    .use(guards)
    .post(
      '/register',
      async ({ body, set }) => {
        set.status = 201
        return { data: await registerUser(kernel, body) }
      },
      {
        body: RegisterBody,
        response: { 201: Data(RegisteredModel) },
        detail: { summary: 'Sign up a User and its Tenant', description: 'Passwords need 8+ characters; e-mail addresses are unique, compared case-insensitively.' },
      },
    )
    .post('/login', async ({ body }) => ({ data: await loginUser(kernel, body) }), {
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
}
