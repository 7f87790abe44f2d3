import { useQueryClient } from '@tanstack/react-query'
import { Link, Outlet, useNavigate } from '@tanstack/react-router'
import { useEffect, useMemo, useState } from 'react'
import { api } from '../api/client'
import { signOut as endSessions } from '../admin-session'
import { t } from '../i18n'
import { type ThemeChoice, setThemeChoice, THEME_EVENT, themeChoice } from '../theme'
import { queryKeys } from '../api/keys'
import { ProfileSync } from '../features/account/profile-sync'
import { Button } from './ui'
import { CommandPalette, ShortcutsDialog, useGlobalShortcuts } from './command-palette'
import { Toaster } from './toast'

/** System, light or dark; remembered in this browser (theme.ts). */
function ThemeSwitch() {
  const [choice, setChoice] = useState<ThemeChoice>(themeChoice)
  const queryClient = useQueryClient()
  useEffect(() => {
    const follow = () => setChoice(themeChoice())
    window.addEventListener(THEME_EVENT, follow)
    return () => window.removeEventListener(THEME_EVENT, follow)
  }, [])
  return (
    <label className="flex items-center gap-2 text-sm text-slate-700">
      {t('shell.theme')}
      <select
        value={choice}
        onChange={(e) => {
          const next = e.target.value as ThemeChoice
          setChoice(next)
          setThemeChoice(next)
          // The choice is the user's, in every browser: stored in the profile (a failure leaves it in this one).
          void api.PATCH('/v1/auth/me', { body: { ui_theme: next } }).then(() => queryClient.invalidateQueries({ queryKey: queryKeys.me() }))
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
    // and the browser's admin session with it, so every tab is signed out.
    await endSessions()
    queryClient.clear()
    await navigate({ to: '/sign-in', search: {} })
  }
  const [palette, setPalette] = useState(false)
  const [help, setHelp] = useState(false)
  const shortcuts = useMemo(
    () => ({
      palette: () => {
        setHelp(false)
        setPalette(true)
      },
      help: () => setHelp(true),
    }),
    [],
  )
  useGlobalShortcuts(shortcuts)
  useEffect(() => {
    const onHelp = () => setHelp(true)
    window.addEventListener('admin:help', onHelp)
    return () => window.removeEventListener('admin:help', onHelp)
  }, [])
  return (
    <div className="min-h-screen">
      <header className="flex flex-wrap items-center gap-2 border-b border-slate-200 bg-white px-3 py-2 sm:gap-4 sm:px-4">
        <Link to="/" className="flex-1 font-semibold text-indigo-800">
          {t('shell.product')}
        </Link>
        <Button onClick={() => setPalette(true)} aria-keyshortcuts="Control+K Meta+K">
          {t('palette.open')}
          <kbd className="hidden rounded bg-slate-100 px-1 font-mono text-xs text-slate-700 sm:inline">{t('shortcuts.key.palette')}</kbd>
        </Button>
        <ThemeSwitch />
        <Link to="/account" className="text-sm font-medium text-indigo-800 underline">
          {t('shell.account')}
        </Link>
        <Button onClick={signOut}>{t('shell.signOut')}</Button>
      </header>
      <main id="main" className="mx-auto max-w-7xl p-3 sm:p-4">
        <Outlet />
      </main>
      <CommandPalette open={palette} onClose={() => setPalette(false)} />
      <ShortcutsDialog open={help} onClose={() => setHelp(false)} />
      <Toaster />
      <ProfileSync />
    </div>
  )
}
