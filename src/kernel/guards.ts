import { Elysia } from 'elysia'
import { type Admission, type Principal, type Role, requireBearerSpaceAccess, requirePrincipal, requireUserToken, type SpaceAccess, type SpaceRef } from './auth'
import { publicOrigin } from './http'
import type { Kernel } from './kernel'
import { type PublicSpace, type PublicSpaceOptions, type PublicSpaceResolver, publicSpaceMissing } from './public-space'

/**
 * The guards every module route declares: `authenticated`, `userToken`, `spaceRole: '<min role>'`, `spaceUser: '<min
 * role>'` (the Space guard for routes that act as a person: Space-scoped tokens get 403 user_required), and for
 * anonymous routes `publicSpace` (the live Space of `{space}` through `publicSpaces`, the resolver the module owning
 * Spaces provides). Modules `.use()` this (macros only, no hooks), so using it in several modules registers nothing
 * twice.
 */
export function guardPlugin(kernel: Kernel, publicSpaces: PublicSpaceResolver | null = null) {
  // Guards run in `transform`, before body validation: an anonymous or under-privileged caller learns 401/403/404,
  // never whether its body would have been valid. `resolve` then hands the result to the handler.
  const resolved = new WeakMap<Request, Principal | SpaceAccess>()
  const take = <T,>(request: Request) => resolved.get(request) as T
  // The modules' admission hooks (billing counts requests): nothing is allocated when no module has one.
  const admit = async (request: Request, principal: Principal, space: SpaceRef | null) => {
    const hooks = kernel.admissions
    if (!hooks.length) return
    const admission: Admission = { method: request.method, pathname: new URL(request.url).pathname, principal, space }
    for (const h of hooks) await h.admit(admission)
  }
  return new Elysia({ name: 'guards' }).macro({
    /** Any valid bearer token (user or Space-scoped); resolves `principal`. */
    authenticated: {
      detail: { security: [{ bearer: [] }], 'x-guard': 'any bearer token (user or Space-scoped)' },
      async transform({ request }) {
        const principal = await requirePrincipal(kernel, request.headers.get('authorization'))
        await admit(request, principal, null)
        resolved.set(request, principal)
      },
      resolve: ({ request }) => ({ principal: take<Principal>(request) }),
    },
    /** A user token (not Space-scoped); resolves `principal`. */
    userToken: {
      detail: { security: [{ bearer: [] }], 'x-guard': 'a user token (Space-scoped tokens get 403 user_required)' },
      async transform({ request }) {
        const principal = await requirePrincipal(kernel, request.headers.get('authorization'))
        requireUserToken(principal)
        await admit(request, principal, null)
        resolved.set(request, principal)
      },
      resolve: ({ request }) => ({ principal: take<Extract<Principal, { kind: 'user' }>>(request) }),
    },
    /** The Space guard for `/spaces/:space/...`: resolves `access` = {principal, space, role}. */
    spaceRole: (min: Role) => ({
      detail: { security: [{ bearer: [] }], 'x-guard': `role ${min} or higher in the Space (no access: 404; a lower role: 403)`, 'x-min-role': min },
      async transform({ request, params }) {
        const slug = String((params as Record<string, unknown>).space ?? '')
        const access = await requireBearerSpaceAccess(kernel, request.headers.get('authorization'), slug, min)
        await admit(request, access.principal, access.space)
        resolved.set(request, access)
      },
      resolve: ({ request }) => ({ access: take<SpaceAccess>(request) }),
    }),
    /** `spaceRole` for routes that act as a person (comments, presence): Space-scoped tokens get 403 user_required. */
    spaceUser: (min: Role) => ({
      detail: {
        security: [{ bearer: [] }],
        'x-guard': `role ${min} or higher in the Space, with a user token (no access: 404; a Space-scoped token: 403 user_required; a lower role: 403)`,
        // The minimum role as `spaceRole` declares it: the roles table and the admin app (api/min-roles.ts) read it.
        'x-min-role': min,
      },
      async transform({ request, params }) {
        const slug = String((params as Record<string, unknown>).space ?? '')
        const access = await requireBearerSpaceAccess(kernel, request.headers.get('authorization'), slug, min, { user: true })
        await admit(request, access.principal, access.space)
        resolved.set(request, access)
      },
      resolve: ({ request }) => ({ access: take<SpaceAccess & { principal: Extract<Principal, { kind: 'user' }> }>(request) }),
    }),
    /**
     * An anonymous route whose path names a Space (`/cdn/:space/...`, the signed datasource push): resolves `space`
     * (the live Space, from the resolver's cache: no query when cached) and `origin` (`publicOrigin`: the base of every
     * URL the route hands out). An unknown, archived or malformed Space is 404 in the shared shape (see
     * PublicSpaceOptions). Runs as `resolve`, after the route's params, query and body are validated: invalid input is
     * 422 whichever Space it names, as when the handlers looked the Space up themselves.
     */
    publicSpace: (opts: PublicSpaceOptions) => {
      if (!publicSpaces) throw new Error('a route declares publicSpace, but no module provides publicSpaceResolver (list the spaces module)')
      const missing = publicSpaceMissing(opts)
      const config = kernel.config
      return {
        async resolve({ request, params }): Promise<{ space: PublicSpace; origin: string }> {
          const space = await publicSpaces.get(String((params as Record<string, unknown>).space ?? ''))
          if (!space) throw missing()
          return { space, origin: publicOrigin(config, request.url) }
        },
      }
    },
  })
}
export type Guards = ReturnType<typeof guardPlugin>
