import { useQueryClient } from '@tanstack/react-query'
import { Link, Outlet, useNavigate } from '@tanstack/react-router'
import { useState } from 'react'
import { api } from '../api/client'
import { setToken } from '../auth'
import { t } from '../i18n'
import { type ThemeChoice, setThemeChoice, themeChoice } from '../theme'
import { Button } from './ui'

/** System, light or dark; remembered in this browser (theme.ts). */
function ThemeSwitch() {
  const [choice, setChoice] = useState<ThemeChoice>(themeChoice)
  return (
    <label className="flex items-center gap-2 text-sm text-slate-700">
      {t('shell.theme')}
      <select
        value={choice}
        onChange={(e) => {
          const next = e.target.value as ThemeChoice
          setChoice(next)
          setThemeChoice(next)
        }}
        className="rounded border border-slate-300 bg-white px-2 py-1 text-slate-900"
      >
        <option value="system">{t('shell.theme.system')}</option>
        <option value="light">{t('shell.theme.light')}</option>
        <option value="dark">{t('shell.theme.dark')}</option>
      </select>
    </label>
  )
}

/** The frame of every signed-in screen: the product name, the Space switcher slot, sign-out. */
export function AppShell() {
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const signOut = async () => {
    // Revoke the token on the server; whatever it answers, this tab forgets it.
    await api.POST('/v1/auth/logout').catch(() => {})
    setToken(null)
    queryClient.clear()
    await navigate({ to: '/sign-in', search: {} })
  }
  return (
    <div className="min-h-screen">
      <header className="flex items-center gap-4 border-b border-slate-200 bg-white px-4 py-2">
        <Link to="/" className="flex-1 font-semibold text-indigo-800">
          {t('shell.product')}
        </Link>
        <ThemeSwitch />
        <Button onClick={signOut}>{t('shell.signOut')}</Button>
      </header>
      <main id="main" className="mx-auto max-w-7xl p-3 sm:p-4">
        <Outlet />
      </main>
    </div>
  )
}
