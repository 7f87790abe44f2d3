import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from './client'
import { queryKeys } from './keys'

/** The reads several screens share, one `queryOptions` per operation; the keys come from `queryKeys` (keys.ts). */
export const spacesQuery = () =>
  queryOptions({ queryKey: queryKeys.spaces(), queryFn: async () => (await unwrap(api.GET('/v1/spaces'))).data })

/** Pages of top-level Stories the tree loads (100 each): 10,000 top-level Stories; beyond, search finds the rest. */
export const TREE_MAX_PAGES = 100

/**
 * The whole Story tree: every page of top-level Stories (the API pages by root, 100 a page; the first page, then
 * the others six at a time), with their subtrees. `meta.total` is the number of top-level Stories, `meta.loaded` how
 * many of them came.
 */
export const treeQuery = (space: string) =>
  queryOptions({
    queryKey: queryKeys.tree(space),
    queryFn: async () => {
      const page = (n: number) =>
        unwrap(api.GET('/v1/spaces/{space}/stories/tree', { params: { path: { space }, query: { depth: 10, per_page: 100, page: n } } }))
      const first = await page(1)
      const pages = Math.min(TREE_MAX_PAGES, Math.ceil(first.meta.total / 100))
      const rest: (typeof first)[] = []
      for (let from = 2; from <= pages; from += 6) {
        const batch = []
        for (let n = from; n < from + 6 && n <= pages; n++) batch.push(page(n))
        rest.push(...(await Promise.all(batch)))
      }
      const data = [first, ...rest].flatMap((p) => p.data)
      return { data, meta: { ...first.meta, truncated: [first, ...rest].some((p) => p.meta.truncated), loaded: data.length } }
    },
  })

export const storySearchQuery = (space: string, q: string) =>
  queryOptions({
    queryKey: queryKeys.storyList(space, { q }),
    queryFn: async () => unwrap(api.GET('/v1/spaces/{space}/stories', { params: { path: { space }, query: { q, per_page: 100 } } })),
  })

export const storyQuery = (space: string, uuid: string, lang?: string) =>
  queryOptions({
    queryKey: queryKeys.storyIn(space, uuid, lang),
    queryFn: async () =>
      (await unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}', { params: { path: { space, uuid }, query: lang ? { lang } : {} } }))).data,
  })

export const componentsQuery = (space: string) =>
  queryOptions({
    queryKey: queryKeys.components(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/components', { params: { path: { space } } }))).data,
    staleTime: 60_000,
  })

export const localesQuery = (space: string) =>
  queryOptions({
    queryKey: queryKeys.locales(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/locales', { params: { path: { space } } }))).data,
    staleTime: 60_000,
  })

/** The caller: user, token, and every Space it can open with its role in each (the shell's role source). */
// Roles change under an open tab (an admin elsewhere demotes or removes the caller): read again every 15 s while
// the tab is visible, when it regains focus, on every navigation inside a Space (space-layout.tsx) and after a 403 or
// 404 from a Space's route (main.tsx), so write controls follow the role without a reload.
export const whoamiQuery = () =>
  queryOptions({
    queryKey: queryKeys.whoami(),
    queryFn: async () => (await unwrap(api.GET('/v1/whoami'))).data,
    staleTime: 5_000,
    refetchInterval: 15_000,
    refetchOnWindowFocus: true,
  })

export const membersQuery = (space: string) =>
  queryOptions({
    queryKey: queryKeys.members(space),
    queryFn: async () => unwrap(api.GET('/v1/spaces/{space}/members', { params: { path: { space }, query: { per_page: 100 } } })),
  })

export const invitationsQuery = (space: string) =>
  queryOptions({
    queryKey: queryKeys.invitations(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/invitations', { params: { path: { space } } }))).data,
  })

export const rolesQuery = (space: string) =>
  queryOptions({
    queryKey: queryKeys.roles(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/roles', { params: { path: { space } } }))).data,
    staleTime: 300_000,
  })

export const spaceTokensQuery = (space: string) =>
  queryOptions({
    queryKey: queryKeys.tokens(space),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/tokens', { params: { path: { space } } }))).data,
  })

/** Archived Stories (they leave the tree; the tree lists them on demand). */
export const archivedStoriesQuery = (space: string) =>
  queryOptions({
    queryKey: queryKeys.storyList(space, { status: 'archived' }),
    queryFn: async () => unwrap(api.GET('/v1/spaces/{space}/stories', { params: { path: { space }, query: { status: 'archived', per_page: 100 } } })),
  })

/** How many Stories use a blueprint and which whitelists name it (asked before a delete). */
export const componentUsageQuery = (space: string, name: string | null) =>
  queryOptions({
    queryKey: queryKeys.componentUsage(space, name),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/components/{name}/usage', { params: { path: { space, name: name ?? '' } } }))).data,
    staleTime: 0,
  })
