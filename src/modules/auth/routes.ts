import { Elysia } from 'elysia'
import type { Deps } from '../../deps'
import type { Guards } from '../../kernel/plugin'
import { LoginBody, RegisterBody } from './model'
import { describePrincipal, loginUser, logout, registerUser } from './service'

export function authRoutes(deps: Deps, guards: Guards) {
  return new Elysia({ prefix: '/auth', tags: ['Auth'] })
    .use(guards)
    .post(
      '/register',
      async ({ body, set }) => {
        set.status = 201
        return { data: await registerUser(deps, body) }
      },
      { body: RegisterBody, detail: { summary: 'Sign up a User and its Tenant' } },
    )
    .post('/login', async ({ body }) => ({ data: await loginUser(deps, body) }), {
      body: LoginBody,
      detail: { summary: 'Exchange e-mail and password for a bearer token' },
    })
    .get('/me', async ({ principal }) => ({ data: await describePrincipal(deps, principal) }), {
      authenticated: true,
      detail: { summary: 'The authenticated user and token' },
    })
    .post(
      '/logout',
      async ({ principal, set }) => {
        await logout(deps, principal)
        set.status = 204
      },
      { authenticated: true, detail: { summary: 'Revoke the token of this request' } },
    )
}
