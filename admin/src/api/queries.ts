import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from './client'

/** Query keys are API paths: a mutation invalidates the paths it changed. */
export const spacesQuery = () =>
  queryOptions({ queryKey: ['/v1/spaces'], queryFn: async () => (await unwrap(api.GET('/v1/spaces'))).data })

/** Pages of top-level Stories the tree loads (100 each): 10,000 top-level Stories; beyond, search finds the rest. */
export const TREE_MAX_PAGES = 100

/**
 * The whole Story tree: every page of top-level Stories (the API pages by root, 100 a page; the first page, then
 * the others six at a time), with their subtrees. `meta.total` is the number of top-level Stories, `meta.loaded` how
 * many of them came.
 */
export const treeQuery = (space: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'stories/tree'],
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
    queryKey: ['/v1/spaces', space, 'stories', { q }],
    queryFn: async () => unwrap(api.GET('/v1/spaces/{space}/stories', { params: { path: { space }, query: { q, per_page: 100 } } })),
  })

export const storyQuery = (space: string, uuid: string, lang?: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'stories', uuid, { lang }],
    queryFn: async () =>
      (await unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}', { params: { path: { space, uuid }, query: lang ? { lang } : {} } }))).data,
  })

export const componentsQuery = (space: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'components'],
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/components', { params: { path: { space } } }))).data,
    staleTime: 60_000,
  })

export const localesQuery = (space: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'locales'],
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/locales', { params: { path: { space } } }))).data,
    staleTime: 60_000,
  })

/** The caller: user, token, and every Space it can open with its role in each (the shell's role source). */
// Roles change under an open tab (an admin elsewhere demotes or removes the caller): read again every 15 s while
// the tab is visible, when it regains focus, on every navigation inside a Space (space-layout.tsx) and after a 403 or
// 404 from a Space's route (main.tsx), so write controls follow the role without a reload.
export const whoamiQuery = () =>
  queryOptions({
    queryKey: ['/v1/whoami'],
    queryFn: async () => (await unwrap(api.GET('/v1/whoami'))).data,
    staleTime: 5_000,
    refetchInterval: 15_000,
    refetchOnWindowFocus: true,
  })

export const membersQuery = (space: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'members'],
    queryFn: async () => unwrap(api.GET('/v1/spaces/{space}/members', { params: { path: { space }, query: { per_page: 100 } } })),
  })

export const invitationsQuery = (space: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'invitations'],
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/invitations', { params: { path: { space } } }))).data,
  })

export const rolesQuery = (space: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'roles'],
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/roles', { params: { path: { space } } }))).data,
    staleTime: 300_000,
  })

export const spaceTokensQuery = (space: string) =>
  queryOptions({
    queryKey: ['/v1/spaces', space, 'tokens'],
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/tokens', { params: { path: { space } } }))).data,
  })
