import type { MessageKey } from './i18n'
import type { paths } from './api/schema'

/**
 * The Space's navigation, one entry per screen: the sidebar (components/sidebar.tsx) and the command palette
 * (components/command-palette.tsx) read it. A screen adds itself with one entry here (and its route in router.tsx).
 *
 * `to` is the route's path below `/spaces/$space` ('' is the Story tree); `requires` is the operation the screen
 * lists with: the entry is shown only when the caller's role (GET /v1/whoami) reaches that operation's minimum role
 * (the OpenAPI's `x-min-role`, api/min-roles.ts), so a viewer sees no settings and an editor no Members.
 */
export type NavSection = 'content' | 'assets' | 'audience' | 'features' | 'settings'

export interface NavEntry {
  id: string
  section: NavSection
  label: MessageKey
  to: string
  requires: { method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; path: keyof paths }
  /** Extra words the command palette matches (in English; the label in the UI's language always matches). */
  keywords?: string
}

/** The sections, in the sidebar's order, with their headings. */
export const NAV_SECTIONS: { id: NavSection; label: MessageKey }[] = [
  { id: 'content', label: 'nav.section.content' },
  { id: 'assets', label: 'nav.section.assets' },
  { id: 'audience', label: 'nav.section.audience' },
  { id: 'features', label: 'nav.section.features' },
  { id: 'settings', label: 'nav.section.settings' },
]

export const NAV: NavEntry[] = [
  { id: 'stories', section: 'content', label: 'nav.stories', to: '', requires: { method: 'GET', path: '/v1/spaces/{space}/stories' } },
  { id: 'components', section: 'content', label: 'nav.components', to: '/components', requires: { method: 'GET', path: '/v1/spaces/{space}/components' }, keywords: 'blueprints schema' },
  { id: 'ai', section: 'content', label: 'nav.ai', to: '/ai', requires: { method: 'GET', path: '/v1/spaces/{space}/ai-jobs' }, keywords: 'ai jobs translation review' },
  { id: 'assets', section: 'assets', label: 'nav.assets', to: '/assets', requires: { method: 'GET', path: '/v1/spaces/{space}/assets' }, keywords: 'images files media' },
  { id: 'forms', section: 'audience', label: 'nav.forms', to: '/forms', requires: { method: 'GET', path: '/v1/spaces/{space}/forms' }, keywords: 'form builder submissions contact embed' },
  { id: 'subscribers', section: 'audience', label: 'nav.subscribers', to: '/subscribers', requires: { method: 'GET', path: '/v1/spaces/{space}/subscribers' }, keywords: 'newsletter audience emails' },
  { id: 'segments', section: 'audience', label: 'nav.segments', to: '/segments', requires: { method: 'GET', path: '/v1/spaces/{space}/audience-segments' }, keywords: 'personalisation variants audience rules' },
  { id: 'datasources', section: 'features', label: 'nav.datasources', to: '/datasources', requires: { method: 'GET', path: '/v1/spaces/{space}/datasources' }, keywords: 'data feeds json webhook sync' },
  { id: 'events', section: 'features', label: 'nav.events', to: '/events', requires: { method: 'GET', path: '/v1/spaces/{space}/events' }, keywords: 'events registrations waitlist calendar' },
  { id: 'galleries', section: 'features', label: 'nav.galleries', to: '/galleries', requires: { method: 'GET', path: '/v1/spaces/{space}/galleries' }, keywords: 'images photos slideshow' },
  { id: 'shop', section: 'features', label: 'nav.shop', to: '/shop', requires: { method: 'GET', path: '/v1/spaces/{space}/products' }, keywords: 'products orders payments stripe commerce' },
  { id: 'analytics', section: 'features', label: 'nav.analytics', to: '/analytics', requires: { method: 'GET', path: '/v1/spaces/{space}/analytics/overview' }, keywords: 'statistics views traffic referrers charts' },
  { id: 'overlays', section: 'features', label: 'nav.overlays', to: '/overlays', requires: { method: 'GET', path: '/v1/spaces/{space}/dom-overlays' }, keywords: 'dom overlay hide replace insert selector embed page rules' },
  { id: 'members', section: 'settings', label: 'nav.members', to: '/members', requires: { method: 'GET', path: '/v1/spaces/{space}/members' }, keywords: 'people invite roles' },
  { id: 'settings', section: 'settings', label: 'nav.settings', to: '/settings', requires: { method: 'PATCH', path: '/v1/spaces/{space}' }, keywords: 'locales languages preview archive' },
  { id: 'webhooks', section: 'settings', label: 'nav.webhooks', to: '/webhooks', requires: { method: 'GET', path: '/v1/spaces/{space}/webhooks' }, keywords: 'hooks deliveries events' },
  { id: 'plugins', section: 'settings', label: 'nav.plugins', to: '/plugins', requires: { method: 'GET', path: '/v1/spaces/{space}/plugins' }, keywords: 'hooks extensions' },
  { id: 'billing', section: 'settings', label: 'nav.billing', to: '/billing', requires: { method: 'GET', path: '/v1/spaces/{space}/billing' }, keywords: 'plan usage limits' },
  { id: 'tokens', section: 'settings', label: 'nav.tokens', to: '/tokens', requires: { method: 'GET', path: '/v1/spaces/{space}/tokens' }, keywords: 'api keys' },
]
