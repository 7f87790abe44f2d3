import type { EventDeclarations } from '../../kernel/events'

export interface SpaceCreatedPayload {
  space: { slug: string; name: string; default_lang: string; locales: string[] }
}
export interface SpaceArchivedPayload {
  space: { slug: string; name: string; archived_at: string }
}
/** Internal: a setting the public surface caches changed (name, default locale, locales or fallbacks). */
export interface SpaceChangedPayload {
  space: { slug: string }
}

/**
 * Internal: Space-scoped tokens stopped working — revoked by an admin, or gone with their creator's access (the
 * creator left or was removed: all of them; was demoted: those above the new role). Open live streams of these
 * tokens end on every instance.
 */
export interface SpaceTokensRevokedPayload {
  token_ids: string[]
  reason: 'revoked' | 'member_removed' | 'member_demoted'
}

declare module '../../kernel/events' {
  interface EventMap {
    'space_token.revoked': SpaceTokensRevokedPayload
    'space.created': SpaceCreatedPayload
    'space.archived': SpaceArchivedPayload
    'space.updated': SpaceChangedPayload
    'space.locales_changed': SpaceChangedPayload
  }
}

const pick = <T extends object, K extends keyof T>(o: T, keys: K[]) => Object.fromEntries(keys.map((k) => [k, o[k] ?? null]))

export const spaceEvents: EventDeclarations = {
  'space.created': {
    description: 'A Space was created (spec 6). No subscription can exist yet when it fires; it is in the outbox for completeness.',
    webhook: (p) => ({ space: pick(p.space, ['slug', 'name', 'default_lang', 'locales']) }),
    body: '`space: {slug, name, default_lang, locales}`',
  },
  'space.archived': {
    description: 'A Space was archived; its public surface answers 404 from then on.',
    webhook: (p) => ({ space: pick(p.space, ['slug', 'name', 'archived_at']) }),
    body: '`space: {slug, name, archived_at}`',
  },
  'space.updated': { description: 'Internal: the name, default locale or preview URL of a Space changed (public caches refresh).' },
  'space.locales_changed': { description: 'Internal: a locale or fallback of a Space was added or removed (public caches refresh).' },
  'space_token.revoked': {
    description: "Internal: Space-scoped tokens stopped working (revoked, or gone with their creator's access); their open live streams end.",
  },
}
