import { useQuery } from '@tanstack/react-query'
import { getRouteApi, Outlet } from '@tanstack/react-router'
import { spacesQuery } from '../api/queries'
import { useCan, useSpaceRole } from '../api/roles'
import { roleName, t } from '../i18n'
import { Sidebar } from '../components/sidebar'
import { ErrorNotice } from '../components/ui'

const route = getRouteApi('/app/spaces/$space')

/** A Space's frame: the sidebar (the switcher and the screens by section, nav.ts) beside the screen. */
export function SpaceLayout() {
  const { space } = route.useParams()
  const spaces = useQuery(spacesQuery())
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
