import { defineModule } from '../../kernel/module'

/**
 * Datasources (spec 4.5 markers, 4.13). So far only its read step exists: no datasource can be defined yet, so no
 * `$ds:` marker resolves and every read reports `meta.datasource_refs: {}`.
 */
export const datasourcesModule = defineModule({
  name: 'datasources',
  readSteps: () => [
    {
      name: 'datasources',
      transform(_ctx, draft) {
        draft.meta.datasource_refs = {}
      },
    },
  ],
})
