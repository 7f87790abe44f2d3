import type { Config } from '../../config'
import { defineModule } from '../../kernel/module'
import type { ReadStep } from '../../kernel/read'

/** `meta.beacon_url` of every Story read (spec 4.3 item 5): absent when SERVICE_BEACON_ENABLED=false. */
function beaconStep(config: Config): ReadStep {
  if (!config.beaconEnabled) return { name: 'beacon' }
  const base = config.publicUrl
  return {
    name: 'beacon',
    // Without PUBLIC_URL the URL is built from the request's origin, so bodies differ per origin.
    select: base ? undefined : (ctx) => void ctx.keyParts.push(ctx.req.origin),
    transform(ctx, draft) {
      draft.meta.beacon_url = `${base ?? ctx.req.origin}/v1/cdn/${ctx.space.slug}/_beacon`
    },
  }
}

/** Privacy-first analytics (spec 4.3, 4.14). So far: the beacon URL announced in Story reads. */
export const analyticsModule = defineModule({
  name: 'analytics',
  readSteps: (_self, kernel) => [beaconStep(kernel.config)],
})
