import type { QueryClient } from '@tanstack/react-query'
import { createRootRouteWithContext, createRoute, createRouter, lazyRouteComponent, Outlet, redirect } from '@tanstack/react-router'
import { getToken } from './auth'
import { AssetsScreen } from './routes/assets'
import { ComponentsScreen } from './routes/components'
import { RegisterScreen } from './routes/register'
import { SignInScreen } from './routes/sign-in'
import { SpaceLayout } from './routes/space-layout'
import { SpacesScreen } from './routes/spaces'
import { StoryEditorScreen } from './routes/story-editor'
import { StoryTreeScreen } from './routes/stories'
import { AppShell } from './components/shell'

export interface RouterContext {
  queryClient: QueryClient
}

/** Only in-app paths are followed after sign-in (never another origin). */
export function safeRedirect(value: unknown): string | undefined {
  return typeof value === 'string' && value.startsWith('/') && !value.startsWith('//') && !value.startsWith('/\\') ? value : undefined
}

const rootRoute = createRootRouteWithContext<RouterContext>()({ component: Outlet })

const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/sign-in',
  validateSearch: (search: Record<string, unknown>): { redirect?: string } => ({ redirect: safeRedirect(search.redirect) }),
  component: SignInScreen,
})

const registerRoute = createRoute({ getParentRoute: () => rootRoute, path: '/register', component: RegisterScreen })

// The page an invitation mail leads to (the service redirects /invite/{token} here): open to anyone with the link.
const inviteRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/invite/$token',
  component: lazyRouteComponent(() => import('./routes/invite'), 'InviteScreen'),
})

/** Everything behind sign-in: without a token, go to sign-in and come back here after. */
const appRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: 'app',
  beforeLoad: ({ location }) => {
    if (!getToken()) throw redirect({ to: '/sign-in', search: { redirect: location.href } })
  },
  component: AppShell,
})

const spacesRoute = createRoute({ getParentRoute: () => appRoute, path: '/', component: SpacesScreen })

const spaceRoute = createRoute({ getParentRoute: () => appRoute, path: '/spaces/$space', component: SpaceLayout })

const storiesRoute = createRoute({
  getParentRoute: () => spaceRoute,
  path: '/',
  validateSearch: (search: Record<string, unknown>): { q?: string } => ({ q: typeof search.q === 'string' && search.q ? search.q : undefined }),
  component: StoryTreeScreen,
})

const storyRoute = createRoute({
  getParentRoute: () => spaceRoute,
  path: '/stories/$uuid',
  validateSearch: (search: Record<string, unknown>): { lang?: string } => ({ lang: typeof search.lang === 'string' && search.lang ? search.lang : undefined }),
  component: StoryEditorScreen,
})

const componentsRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/components', component: ComponentsScreen })

const assetsRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/assets', component: AssetsScreen })

// Screens loaded with their first visit (a chunk of their own when the bundle is split).
const membersRoute = createRoute({
  getParentRoute: () => spaceRoute,
  path: '/members',
  component: lazyRouteComponent(() => import('./routes/members'), 'MembersScreen'),
})

const tokensRoute = createRoute({
  getParentRoute: () => spaceRoute,
  path: '/tokens',
  component: lazyRouteComponent(() => import('./routes/tokens'), 'TokensScreen'),
})

const routeTree = rootRoute.addChildren([
  signInRoute,
  registerRoute,
  inviteRoute,
  appRoute.addChildren([spacesRoute, spaceRoute.addChildren([storiesRoute, storyRoute, componentsRoute, assetsRoute, membersRoute, tokensRoute])]),
])

export function createAppRouter(queryClient: QueryClient) {
  return createRouter({ routeTree, basepath: '/admin', context: { queryClient }, defaultPreload: 'intent', scrollRestoration: true })
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createAppRouter>
  }
}

