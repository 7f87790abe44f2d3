import { t } from 'elysia'
import type { Config } from '../../config'
import type { ReadStep, ReadStepMeta } from '../../kernel/read'

/** `meta.beacon_url`: declared even when the beacon is off (the entry is then absent, and null in GraphQL). */
const BEACON_META: ReadStepMeta = {
  schema: {
    beacon_url: t.Optional(t.String({ format: 'uri', description: 'Absent when SERVICE_BEACON_ENABLED=false' })),
  },
  graphql: (f) => ({
    beacon_url: f.string({
      nullable: true,
      description: 'Absolute URL of the analytics beacon (null when SERVICE_BEACON_ENABLED=false).',
      resolve: (m) => (m.beacon_url as string | undefined) ?? null,
    }),
  }),
}

/** `meta.beacon_url` of every Story read (spec 4.3 item 5): absent when SERVICE_BEACON_ENABLED=false. */
export function beaconStep(config: Config): ReadStep {
  if (!config.beaconEnabled) return { name: 'beacon', meta: BEACON_META }
  const base = config.publicUrl
  return {
    name: 'beacon',
    meta: BEACON_META,
    // Without PUBLIC_URL the URL is built from the request's origin, so bodies differ per origin.
    select: base ? undefined : (ctx) => void ctx.keyParts.push(ctx.req.origin),
    // The origin is part of the URL, which keys the memo.
    vary: () => '',
    transform(ctx, draft) {
      draft.meta.beacon_url = `${base ?? ctx.req.origin}/v1/cdn/${ctx.space.slug}/_beacon`
    },
  }
}
