import { useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi, Outlet, useNavigate, useRouterState } from '@tanstack/react-router'
import { useEffect, useMemo, useRef } from 'react'
import { queryKeys } from '../api/keys'
import { spacesQuery, whoamiQuery } from '../api/queries'
import { useCan, useSpaceRole } from '../api/roles'
import { roleName, t } from '../i18n'
import { Sidebar } from '../components/sidebar'
import { toast } from '../components/toast'
import { ErrorNotice } from '../components/ui'

const route = getRouteApi('/app/spaces/$space')

/**
 * Follows the caller's access to the Space while it is open: whoami is read again on every navigation inside it (and
 * every 15 s, on focus, after a 403/404: api/queries.ts, main.tsx). A changed role is said in a toast (the screens
 * show or hide their controls from it); a Space the caller lost (removed, archived elsewhere) is left for the Space
 * list, with a message.
 */
function useFollowAccess(space: string) {
  const me = useQuery(whoamiQuery())
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const pathname = useRouterState({ select: (s) => s.location.pathname })
  const openedAt = useMemo(() => Date.now(), [space])
  useEffect(() => {
    void queryClient.invalidateQueries({ queryKey: queryKeys.whoami() })
  }, [pathname, queryClient])

  const role = me.data?.spaces.find((s) => s.slug === space)?.role
  const previous = useRef<{ space: string; role: string | undefined }>({ space, role })
  useEffect(() => {
    const was = previous.current
    previous.current = { space, role }
    if (was.space === space && was.role && role && was.role !== role) toast(t('roles.changed', { role: roleName(role) }))
  }, [space, role])

  const askedAgain = useRef('')
  const left = useRef('')
  useEffect(() => {
    if (!me.data || me.isFetching || role) return
    // An answer older than this visit (a Space created a moment ago) is not proof: ask again first (once).
    if (me.dataUpdatedAt < openedAt) {
      if (askedAgain.current !== space) {
        askedAgain.current = space
        void me.refetch()
      }
      return
    }
    if (left.current === space) return
    left.current = space
    toast(t('roles.lostAccess', { space }), 'error')
    void queryClient.removeQueries({ queryKey: queryKeys.space(space) })
    void navigate({ to: '/' })
  }, [me.data, me.isFetching, me.dataUpdatedAt, role, openedAt, space])
}

/** A Space's frame: the sidebar (the switcher and the screens by section, nav.ts) beside the screen. */
export function SpaceLayout() {
  const { space } = route.useParams()
  const spaces = useQuery(spacesQuery())
  useFollowAccess(space)
  const role = useSpaceRole(space)
  const canWrite = useCan(space, 'POST', '/v1/spaces/{space}/stories')
  const readOnly = role !== undefined && !canWrite
  return (
    <div className="flex flex-col gap-4 md:grid md:grid-cols-[13rem_minmax(0,1fr)] md:items-start">
      <Sidebar space={space} />
      <div className="flex min-w-0 flex-col gap-4">
        {readOnly && role ? (
          <p className="rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-800" data-testid="read-only-space">
            {t('roles.readOnly', { role: roleName(role) })}
          </p>
        ) : null}
        {spaces.isError ? <ErrorNotice error={spaces.error} /> : null}
        <Outlet />
      </div>
    </div>
  )
}
