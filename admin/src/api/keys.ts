/**
 * The query keys, from one factory: every read of the app takes its key from here (test/admin/query-keys.test.ts
 * fails on a literal array key anywhere else). A key starts with the API path it reads, so a mutation invalidates
 * what it changed by prefix: `queryKeys.space(space)` is every read of the Space, `queryKeys.stories(space)` every
 * Story list and Story (not the tree: `stories/tree` is a path of its own).
 */
const SPACES = '/v1/spaces'

type Filter = Record<string, unknown>

export const queryKeys = {
  me: () => ['/v1/auth/me'] as const,
  whoami: () => ['/v1/whoami'] as const,
  invite: (token: string) => ['/v1/invite', token] as const,
  spaces: () => [SPACES] as const,
  space: (space: string) => [SPACES, space] as const,
  spaceDetail: (space: string) => [SPACES, space, 'detail'] as const,
  locales: (space: string) => [SPACES, space, 'locales'] as const,

  // Stories
  tree: (space: string) => [SPACES, space, 'stories/tree'] as const,
  stories: (space: string) => [SPACES, space, 'stories'] as const,
  storyList: (space: string, filter: Filter) => [...queryKeys.stories(space), filter] as const,
  story: (space: string, uuid: string) => [...queryKeys.stories(space), uuid] as const,
  storyIn: (space: string, uuid: string, lang?: string) => [...queryKeys.story(space, uuid), { lang }] as const,
  versions: (space: string, uuid: string, lang: string, current: number) => [...queryKeys.story(space, uuid), 'versions', { lang }, current] as const,
  version: (space: string, uuid: string, n: number) => [...queryKeys.story(space, uuid), 'versions', 'one', n] as const,
  comments: (space: string, uuid: string) => [...queryKeys.story(space, uuid), 'comments'] as const,
  storySchedules: (space: string, uuid: string) => [...queryKeys.story(space, uuid), 'schedules'] as const,
  schedules: (space: string) => [SPACES, space, 'stories/schedules'] as const,

  // Blueprints and assets
  components: (space: string) => [SPACES, space, 'components'] as const,
  componentUsage: (space: string, name: string | null) => [...queryKeys.components(space), name, 'usage'] as const,
  assets: (space: string) => [SPACES, space, 'assets'] as const,
  assetList: (space: string, filter: { q: string; contentType?: string; page: number }) => [...queryKeys.assets(space), filter] as const,
  asset: (space: string, uuid: string) => [...queryKeys.assets(space), uuid] as const,

  // People and operations
  members: (space: string) => [SPACES, space, 'members'] as const,
  invitations: (space: string) => [SPACES, space, 'invitations'] as const,
  roles: (space: string) => [SPACES, space, 'roles'] as const,
  tokens: (space: string) => [SPACES, space, 'tokens'] as const,
  billing: (space: string) => [SPACES, space, 'billing'] as const,
  aiJobs: (space: string) => [SPACES, space, 'ai-jobs'] as const,
  aiJobList: (space: string, filter: Filter) => [...queryKeys.aiJobs(space), filter] as const,
  aiJob: (space: string, uuid: string) => [...queryKeys.aiJobs(space), uuid] as const,
  aiStatus: (space: string) => [SPACES, space, 'ai/status'] as const,

  // Audience: forms and subscribers
  forms: (space: string) => [SPACES, space, 'forms'] as const,
  form: (space: string, uuid: string) => [...queryKeys.forms(space), uuid] as const,
  submissions: (space: string, uuid: string, filter?: Filter) =>
    filter ? ([...queryKeys.form(space, uuid), 'submissions', filter] as const) : ([...queryKeys.form(space, uuid), 'submissions'] as const),
  subscribers: (space: string) => [SPACES, space, 'subscribers'] as const,
  subscriberList: (space: string, filter: Filter) => [...queryKeys.subscribers(space), filter] as const,
  newsletter: (space: string) => [SPACES, space, 'newsletter'] as const,
  serverVersion: () => ['/v1/version'] as const,

  // Site data: datasources, segments and variants
  datasources: (space: string) => [SPACES, space, 'datasources'] as const,
  datasource: (space: string, key: string) => [...queryKeys.datasources(space), key] as const,
  datasourceEntries: (space: string, key: string, page: number, q: string, revision: number | null) =>
    [...queryKeys.datasource(space, key), 'entries', page, q, revision] as const,
  datasourceUsage: (space: string, key: string) => [...queryKeys.datasource(space, key), 'usage'] as const,
  cronPreview: (space: string, cron: string) => [...queryKeys.datasources(space), 'cron-preview', cron] as const,
  segments: (space: string) => [SPACES, space, 'audience-segments'] as const,
  variants: (space: string, uuid: string) => [...queryKeys.story(space, uuid), 'variants'] as const,
  segmentRulesCheck: (space: string, rules: unknown) => [...queryKeys.segments(space), 'check', rules] as const,
  /** DOM overlay rules: the whole list in priority order (the tester is a mutation, never cached). */
  overlays: (space: string) => [SPACES, space, 'dom-overlays'] as const,

  // Site features: events, galleries, shop, analytics (each feature's queries.ts builds on these)
  events: (space: string) => [SPACES, space, 'events'] as const,
  galleries: (space: string) => [SPACES, space, 'galleries'] as const,
  /** The public gallery answer the preview reads; without `lang` every locale's. */
  galleryPreview: (space: string, slug: string, lang?: string) =>
    lang === undefined ? (['/v1/cdn', space, 'galleries', slug] as const) : (['/v1/cdn', space, 'galleries', slug, lang] as const),
  shop: (space: string) => [SPACES, space, 'shop'] as const,
  analytics: (space: string) => [SPACES, space, 'analytics'] as const,
  storyAnalytics: (space: string, uuid: string, days: number) => [...queryKeys.story(space, uuid), 'analytics', days] as const,

  // The generated resource screens (components/resource): keyed by the list's or the log's API path
  resource: (space: string, path: string) => [SPACES, space, path] as const,
  resourcePage: (space: string, path: string, page: number) => [...queryKeys.resource(space, path), page] as const,
  resourceLog: (space: string, path: string, item: Filter, filters: Filter) => [...queryKeys.resource(space, path), item, filters] as const,
}
