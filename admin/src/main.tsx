import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { RouterProvider } from '@tanstack/react-router'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { ApiFailure, handleAccessRefused, handleUnauthorized } from './api/client'
import { queryKeys } from './api/keys'
import { setToken } from './auth'
import { createAppRouter } from './router'
import { initTheme } from './theme'

initTheme()

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      // A 4xx will not change by asking again.
      retry: (count, error) => !(error instanceof ApiFailure && error.status >= 400 && error.status < 500) && count < 2,
      refetchOnWindowFocus: false,
    },
  },
})
// The invitation mail's link is /invite/{token} at the service's root, which serves this app: its screen lives below
// /admin (the router's basepath), so the address moves there before the router reads it.
if (/^\/invite\/[A-Za-z0-9_-]+$/.test(location.pathname)) history.replaceState(null, '', `/admin${location.pathname}`)
const router = createAppRouter(queryClient)

// The token expired or was revoked: forget it and everything read with it, then sign in and come back.
handleUnauthorized(() => {
  if (router.state.location.pathname === '/sign-in') return
  setToken(null)
  queryClient.clear()
  void router.navigate({ to: '/sign-in', search: { redirect: router.state.location.href } })
})

// A Space's route refused (403: the role is lower now; 404: removed from the Space): read the role again, so the
// screens drop the controls it no longer allows (and space-layout.tsx leaves a Space the caller lost). At most once a second.
let lastAccessCheck = 0
handleAccessRefused(() => {
  if (Date.now() - lastAccessCheck < 1_000) return
  lastAccessCheck = Date.now()
  void queryClient.invalidateQueries({ queryKey: queryKeys.whoami() })
})

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
)
