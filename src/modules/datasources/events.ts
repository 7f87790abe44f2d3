import type { EventDeclarations } from '../../kernel/events'

/** `datasource.synced` (public): a pull or a push succeeded. `datasource` is exactly what docs/webhooks.md lists. */
export interface DatasourceSyncedPayload {
  datasource: { key: string; label: string; type: 'http_json' | 'webhook_push'; entries: number; synced_at: string }
}

/**
 * Internal: a datasource was created, updated, synced, pushed to or deleted. Keeps every instance's in-memory copy
 * (key → revision, entries per revision) fresh; `revision` null means deleted.
 */
export interface DatasourceChangedPayload {
  key: string
  id: number
  revision: number | null
}

declare module '../../kernel/events' {
  interface EventMap {
    'datasource.synced': DatasourceSyncedPayload
    'datasource.changed': DatasourceChangedPayload
  }
}

export const datasourceEvents: EventDeclarations = {
  'datasource.synced': {
    description: 'A datasource pull (scheduled or on demand) or a signed push succeeded.',
    webhook: (p) => ({ datasource: p.datasource }),
    body: '`datasource: {key, label, type, entries, synced_at}`',
  },
  'datasource.changed': { description: 'Internal: a datasource or its data changed (read caches on every instance).' },
}
