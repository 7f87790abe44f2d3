import { defineModule } from '../../kernel/module'

/**
 * Personalisation (spec 4.5, 4.9): audience segments pick a per-Story variant at read time. So far only its read step
 * exists: no segment can be defined yet, so every read reports `meta.served_segment: null`.
 */
export const segmentsModule = defineModule({
  name: 'segments',
  readSteps: () => [
    {
      name: 'segment',
      transform(_ctx, draft) {
        draft.meta.served_segment = null
      },
    },
  ],
})
