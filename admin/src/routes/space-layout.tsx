import { useQuery } from '@tanstack/react-query'
import { getRouteApi, Link, Outlet, useNavigate } from '@tanstack/react-router'
import { useId } from 'react'
import { spacesQuery } from '../api/queries'
import { atLeast, minRoleOf, useCan, useSpaceRole } from '../api/roles'
import { roleName, t } from '../i18n'
import { ErrorNotice } from '../components/ui'

const OPERATIONS = [
  { to: '/spaces/$space/webhooks', list: '/v1/spaces/{space}/webhooks', label: 'nav.webhooks' },
  { to: '/spaces/$space/plugins', list: '/v1/spaces/{space}/plugins', label: 'nav.plugins' },
  { to: '/spaces/$space/ai', list: '/v1/spaces/{space}/ai-jobs', label: 'nav.ai' },
  { to: '/spaces/$space/billing', list: '/v1/spaces/{space}/billing', label: 'nav.billing' },
] as const

const route = getRouteApi('/app/spaces/$space')

/** The Space switcher (every Space with the user's role) above the Space's screens. */
export function SpaceLayout() {
  const { space } = route.useParams()
  const navigate = useNavigate()
  const spaces = useQuery(spacesQuery())
  const id = useId()
  const current = spaces.data?.find((s) => s.slug === space)
  // Sections by the caller's role (whoami) against each screen's operation (x-min-role): admins only see these.
  const canManagePeople = useCan(space, 'GET', '/v1/spaces/{space}/members')
  const canManageTokens = useCan(space, 'GET', '/v1/spaces/{space}/tokens')
  const role = useSpaceRole(space)
  const canWrite = useCan(space, 'POST', '/v1/spaces/{space}/stories')
  const readOnly = role !== undefined && !canWrite
  return (
    <div className="flex flex-col gap-4">
      <nav aria-label={t('layout.switcher')} className="flex flex-wrap items-center gap-3 rounded-lg bg-white px-4 py-2 ring-1 ring-slate-200">
        <label htmlFor={id} className="text-sm font-medium">
          {t('layout.space')}
        </label>
        <select
          id={id}
          value={space}
          onChange={(e) => navigate({ to: '/spaces/$space', params: { space: e.target.value }, search: {} })}
          className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm"
        >
          {(spaces.data ?? []).filter((s) => !s.archived || s.slug === space).map((s) => (
            <option key={s.slug} value={s.slug}>
              {s.name} ({s.role})
            </option>
          ))}
          {!current ? <option value={space}>{space}</option> : null}
        </select>
        {current ? (
          <span className="text-sm text-slate-700" data-testid="role">
            {t('layout.yourRole')} <strong>{current.role}</strong>
          </span>
        ) : null}
        <Link to="/spaces/$space" params={{ space }} search={{}} className="ml-auto text-sm font-medium text-indigo-800 underline">
          {t('nav.stories')}
        </Link>
        <Link to="/spaces/$space/components" params={{ space }} className="text-sm font-medium text-indigo-800 underline">
          {t('nav.components')}
        </Link>
        <Link to="/spaces/$space/assets" params={{ space }} className="text-sm font-medium text-indigo-800 underline">
          {t('nav.assets')}
        </Link>
        {canManagePeople ? (
          <Link to="/spaces/$space/members" params={{ space }} className="text-sm font-medium text-indigo-800 underline">
            {t('nav.members')}
          </Link>
        ) : null}
        {canManageTokens ? (
          <Link to="/spaces/$space/tokens" params={{ space }} className="text-sm font-medium text-indigo-800 underline">
            {t('nav.tokens')}
          </Link>
        ) : null}
        {/* Operations: one link per screen whose list operation the caller's role reaches. */}
        {OPERATIONS.filter((o) => atLeast(role, minRoleOf('GET', o.list) ?? 'admin')).map((o) => (
          <Link key={o.to} to={o.to} params={{ space }} className="text-sm font-medium text-indigo-800 underline">
            {t(o.label)}
          </Link>
        ))}
      </nav>
      {readOnly && role ? (
        <p className="rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-800" data-testid="read-only-space">
          {t('roles.readOnly', { role: roleName(role) })}
        </p>
      ) : null}
      {spaces.isError ? <ErrorNotice error={spaces.error} /> : null}
      <Outlet />
    </div>
  )
}
