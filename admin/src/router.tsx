import type { QueryClient } from '@tanstack/react-query'
import { createRootRouteWithContext, createRoute, createRouter, lazyRouteComponent, Outlet, redirect } from '@tanstack/react-router'
import { getToken } from './auth'
import { resumeAdminSession } from './admin-session'
import { SpaceLayout } from './routes/space-layout'
import { RouteFocus, SkipLink } from './components/route-focus'
import { AppShell } from './components/shell'

export interface RouterContext {
  queryClient: QueryClient
}

/** Only in-app paths are followed after sign-in (never another origin). */
export function safeRedirect(value: unknown): string | undefined {
  return typeof value === 'string' && value.startsWith('/') && !value.startsWith('//') && !value.startsWith('/\\') ? value : undefined
}

// Every screen is loaded with its first visit: a chunk of its own (the bundle is built with `splitting`), fetched
// from /admin/assets/ when the route is first entered (or on hover/focus of a link to it: defaultPreload 'intent').
function Root() {
  return (
    <>
      <SkipLink />
      <Outlet />
      <RouteFocus />
    </>
  )
}

const rootRoute = createRootRouteWithContext<RouterContext>()({ component: Root })

const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/sign-in',
  validateSearch: (search: Record<string, unknown>): { redirect?: string } => ({ redirect: safeRedirect(search.redirect) }),
  component: lazyRouteComponent(() => import('./routes/sign-in'), 'SignInScreen'),
})

const registerRoute = createRoute({ getParentRoute: () => rootRoute, path: '/register', component: lazyRouteComponent(() => import('./routes/register'), 'RegisterScreen') })

// The page an invitation mail leads to (the service redirects /invite/{token} here): open to anyone with the link.
const inviteRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/invite/$token',
  component: lazyRouteComponent(() => import('./routes/invite'), 'InviteScreen'),
})

/**
 * Everything behind sign-in: without a token, trade the browser's admin session for one (a tab opened from another,
 * e.g. by Ctrl+click); without a session either, go to sign-in and come back here after.
 */
const appRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: 'app',
  beforeLoad: async ({ location }) => {
    if (!getToken() && !(await resumeAdminSession())) throw redirect({ to: '/sign-in', search: { redirect: location.href } })
  },
  component: AppShell,
})

const spacesRoute = createRoute({ getParentRoute: () => appRoute, path: '/', component: lazyRouteComponent(() => import('./routes/spaces'), 'SpacesScreen') })

const spaceRoute = createRoute({ getParentRoute: () => appRoute, path: '/spaces/$space', component: SpaceLayout })

const storiesRoute = createRoute({
  getParentRoute: () => spaceRoute,
  path: '/',
  // `new`: open the New Story / New folder dialog (the command palette's action).
  validateSearch: (search: Record<string, unknown>): { q?: string; new?: 'story' | 'folder' } => ({
    q: typeof search.q === 'string' && search.q ? search.q : undefined,
    new: search.new === 'story' || search.new === 'folder' ? search.new : undefined,
  }),
  component: lazyRouteComponent(() => import('./routes/stories'), 'StoryTreeScreen'),
})

const storyRoute = createRoute({
  getParentRoute: () => spaceRoute,
  path: '/stories/$uuid',
  validateSearch: (search: Record<string, unknown>): { lang?: string } => ({ lang: typeof search.lang === 'string' && search.lang ? search.lang : undefined }),
  component: lazyRouteComponent(() => import('./routes/story-editor'), 'StoryEditorScreen'),
})

const componentsRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/components', component: lazyRouteComponent(() => import('./routes/components'), 'ComponentsScreen') })

const assetsRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/assets', component: lazyRouteComponent(() => import('./routes/assets'), 'AssetsScreen') })

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

// Feature screens (admin/src/features/<feature>/): one route each, listed in nav.ts for the sidebar and palette.
const accountRoute = createRoute({ getParentRoute: () => appRoute, path: '/account', component: lazyRouteComponent(() => import('./features/account/account-screen'), 'AccountScreen') })
const forgotPasswordRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/forgot-password',
  component: lazyRouteComponent(() => import('./features/account/forgot-password'), 'ForgotPasswordScreen'),
})
const settingsRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/settings', component: lazyRouteComponent(() => import('./features/settings/settings-screen'), 'SettingsScreen') })
// Operations (issue 51): webhooks and plugins are the generated resource screen (components/resource/), AI and
// billing are built by hand; each is a chunk of its own under features/<feature>/.
const webhooksRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/webhooks', component: lazyRouteComponent(() => import('./features/webhooks/webhooks-screen'), 'WebhooksScreen') })
const pluginsRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/plugins', component: lazyRouteComponent(() => import('./features/plugins/plugins-screen'), 'PluginsScreen') })
const aiRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/ai', component: lazyRouteComponent(() => import('./features/ai/ai-screen'), 'AiScreen') })
const billingRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/billing', component: lazyRouteComponent(() => import('./features/billing/billing-screen'), 'BillingScreen') })
// Site data (issue 45): datasources (list, one datasource) and audience segments, a chunk each under features/<feature>/.
const datasourcesRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/datasources', component: lazyRouteComponent(() => import('./features/datasources/datasources-screen'), 'DatasourcesScreen') })
const datasourceRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/datasources/$key', component: lazyRouteComponent(() => import('./features/datasources/datasource-screen'), 'DatasourceScreen') })
const segmentsRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/segments', component: lazyRouteComponent(() => import('./features/segments/segments-screen'), 'SegmentsScreen') })
const siteDataRoutes = [datasourcesRoute, datasourceRoute, segmentsRoute]
const operationsRoutes = [webhooksRoute, pluginsRoute, aiRoute, billingRoute]
// Audience (issue 45): forms (list, builder, embed snippet, submissions) and subscribers, hand-built screens.
const formsRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/forms', component: lazyRouteComponent(() => import('./features/forms/forms-screen'), 'FormsScreen') })
const formRoute = createRoute({
  getParentRoute: () => spaceRoute,
  path: '/forms/$uuid',
  validateSearch: (search: Record<string, unknown>): { tab?: 'embed' | 'submissions' } => ({ tab: search.tab === 'embed' || search.tab === 'submissions' ? search.tab : undefined }),
  component: lazyRouteComponent(() => import('./features/forms/form-screen'), 'FormScreen'),
})
const subscribersRoute = createRoute({
  getParentRoute: () => spaceRoute,
  path: '/subscribers',
  component: lazyRouteComponent(() => import('./features/subscribers/subscribers-screen'), 'SubscribersScreen'),
})
const audienceRoutes = [formsRoute, formRoute, subscribersRoute]
// Site features (issue 45): events, galleries, shop, analytics, DOM overlays; each a chunk of its own under features/<feature>/.
const eventsRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/events', component: lazyRouteComponent(() => import('./features/events/events-screen'), 'EventsScreen') })
const galleriesRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/galleries', component: lazyRouteComponent(() => import('./features/galleries/galleries-screen'), 'GalleriesScreen') })
const shopRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/shop', component: lazyRouteComponent(() => import('./features/shop/shop-screen'), 'ShopScreen') })
const analyticsRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/analytics', component: lazyRouteComponent(() => import('./features/analytics/analytics-screen'), 'AnalyticsScreen') })
const overlaysRoute = createRoute({ getParentRoute: () => spaceRoute, path: '/overlays', component: lazyRouteComponent(() => import('./features/overlays/overlays-screen'), 'OverlaysScreen') })
const siteRoutes = [eventsRoute, galleriesRoute, shopRoute, analyticsRoute, overlaysRoute]

const routeTree = rootRoute.addChildren([
  signInRoute,
  registerRoute,
  inviteRoute,
  forgotPasswordRoute,
  appRoute.addChildren([spacesRoute, accountRoute, spaceRoute.addChildren([storiesRoute, storyRoute, componentsRoute, assetsRoute, membersRoute, tokensRoute, settingsRoute, ...operationsRoutes, ...audienceRoutes, ...siteDataRoutes, ...siteRoutes])]),
])

export function createAppRouter(queryClient: QueryClient) {
  return createRouter({ routeTree, basepath: '/admin', context: { queryClient }, defaultPreload: 'intent', scrollRestoration: true })
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createAppRouter>
  }
}

