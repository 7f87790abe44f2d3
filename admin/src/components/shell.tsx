import { useQueryClient } from '@tanstack/react-query'
import { Link, Outlet, useNavigate } from '@tanstack/react-router'
import { api } from '../api/client'
import { setToken } from '../auth'
import { Button } from './ui'

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
          Content Service
        </Link>
        <Button onClick={signOut}>Sign out</Button>
      </header>
      <main className="mx-auto max-w-5xl p-4">
        <Outlet />
      </main>
    </div>
  )
}
