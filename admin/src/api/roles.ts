import { useQuery } from '@tanstack/react-query'
import { MIN_ROLES } from './min-roles'
import type { paths } from './schema'
import { whoamiQuery } from './queries'

export type Role = 'viewer' | 'editor' | 'admin'
/** The roles, lowest first. */
export const ROLE_OPTIONS = ['viewer', 'editor', 'admin'] as const
const RANK: Record<Role, number> = { viewer: 0, editor: 1, admin: 2 }

/** Whether `role` is `min` or higher (viewer < editor < admin). */
export const atLeast = (role: Role | undefined, min: Role) => role !== undefined && RANK[role] >= RANK[min]

/** The minimum role of a Space operation, from the OpenAPI's `x-min-role` (api/min-roles.ts, generated). */
export function minRoleOf(method: string, path: keyof paths | string): Role | undefined {
  return MIN_ROLES[`${method.toUpperCase()} ${path}` as keyof typeof MIN_ROLES]
}

/** The caller's role in `space` from `GET /v1/whoami`; undefined while it loads (show no write control until then). */
export function useSpaceRole(space: string): Role | undefined {
  const me = useQuery(whoamiQuery())
  return me.data?.spaces.find((s) => s.slug === space)?.role
}

/**
 * Whether the caller may call `method path` in `space`: its role against the operation's minimum role. A write
 * control is rendered only when this is true (a viewer sees no Save, an editor no settings).
 */
export function useCan(space: string, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: keyof paths): boolean {
  const role = useSpaceRole(space)
  const min = minRoleOf(method, path)
  return min === undefined ? role !== undefined : atLeast(role, min)
}
