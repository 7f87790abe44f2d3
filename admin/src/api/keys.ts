/**
 * The query keys, from one factory: a key starts with the API path it reads, so a mutation invalidates what it
 * changed by prefix (`queryKeys.space(space)` is every read of the Space).
 */
export const queryKeys = {
  me: () => ['/v1/auth/me'] as const,
  whoami: () => ['/v1/whoami'] as const,
  spaces: () => ['/v1/spaces'] as const,
  space: (space: string) => ['/v1/spaces', space] as const,
  spaceDetail: (space: string) => ['/v1/spaces', space, 'detail'] as const,
  locales: (space: string) => ['/v1/spaces', space, 'locales'] as const,
}
