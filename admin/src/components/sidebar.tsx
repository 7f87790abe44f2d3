import { useQuery } from '@tanstack/react-query'
import { Link, useNavigate } from '@tanstack/react-router'
import { useId } from 'react'
import { spacesQuery } from '../api/queries'
import { atLeast, minRoleOf, type Role, useSpaceRole } from '../api/roles'
import { roleName, t } from '../i18n'
import { NAV, NAV_SECTIONS, type NavEntry } from '../nav'

/** The entries of the nav registry the caller's role may use in this Space (none while whoami loads). */
export function visibleEntries(role: Role | undefined): NavEntry[] {
  return NAV.filter((e) => {
    const min = minRoleOf(e.requires.method, e.requires.path)
    return min === undefined ? role !== undefined : atLeast(role, min)
  })
}

export function useNavEntries(space: string): NavEntry[] {
  return visibleEntries(useSpaceRole(space))
}

/** The Space switcher and the Space's screens by section (nav.ts), only those the caller's role may use. */
export function Sidebar({ space }: { space: string }) {
  const navigate = useNavigate()
  const spaces = useQuery(spacesQuery())
  const id = useId()
  const current = spaces.data?.find((s) => s.slug === space)
  const entries = useNavEntries(space)
  return (
    <nav aria-label={t('layout.switcher')} className="flex flex-col gap-4 rounded-lg bg-white p-3 ring-1 ring-slate-200 md:sticky md:top-4">
      <div className="flex flex-col gap-1">
        <label htmlFor={id} className="text-xs font-semibold uppercase tracking-wide text-slate-600">
          {t('layout.space')}
        </label>
        <select
          id={id}
          value={space}
          onChange={(e) => navigate({ to: '/spaces/$space', params: { space: e.target.value }, search: {} })}
          className="w-full rounded-md border border-slate-300 bg-white px-2 py-1 text-sm"
        >
          {(spaces.data ?? []).filter((s) => !s.archived || s.slug === space).map((s) => (
            <option key={s.slug} value={s.slug}>
              {s.name} ({roleName(s.role)})
            </option>
          ))}
          {!current ? <option value={space}>{space}</option> : null}
        </select>
        {current ? (
          <span className="text-xs text-slate-700" data-testid="role">
            {t('layout.yourRole')} <strong>{roleName(current.role)}</strong>
          </span>
        ) : null}
      </div>
      <div className="flex flex-row flex-wrap gap-x-4 gap-y-2 md:flex-col md:gap-3">
        {NAV_SECTIONS.map((section) => {
          const items = entries.filter((e) => e.section === section.id)
          if (!items.length) return null
          const headingId = `${id}-${section.id}`
          return (
            <div key={section.id} className="flex flex-col gap-1">
              <h2 id={headingId} className="text-xs font-semibold uppercase tracking-wide text-slate-600">
                {t(section.label)}
              </h2>
              <ul aria-labelledby={headingId} className="flex flex-row flex-wrap gap-1 md:flex-col">
                {items.map((e) => (
                  <li key={e.id}>
                    <Link
                      to={`/spaces/$space${e.to}` as '/spaces/$space'}
                      params={{ space }}
                      search={e.to === '' ? {} : undefined}
                      activeOptions={{ exact: e.to === '', includeSearch: false }}
                      className="block rounded-md px-2 py-1 text-sm font-medium text-slate-800 hover:bg-slate-100 aria-[current=page]:bg-indigo-50 aria-[current=page]:text-indigo-800"
                      data-nav={e.id}
                    >
                      {t(e.label)}
                    </Link>
                  </li>
                ))}
              </ul>
            </div>
          )
        })}
      </div>
    </nav>
  )
}
