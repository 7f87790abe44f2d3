import { and, eq, isNull } from 'drizzle-orm'
import { forms } from './tables'
import { ScopedCache, cacheShare, plainSize } from '../../kernel/cache'
import type { Kernel } from '../../kernel/kernel'
import type { FormRow } from './service'

/** Every change arrives as `form.changed` (here at commit, elsewhere through NOTIFY); the expiry is a safety net. */
const TTL_MS = 60_000
const MAX_ENTRIES = 10_000

/**
 * Live forms by (Space, slug) for the public submit: a cached form costs a Map lookup, no query. A kernel cache
 * (kernel/cache.ts) keyed `<space id>:<slug>`, one scope per form: `form.changed` drops that form only.
 */
export class FormCache {
  readonly cache: ScopedCache<string, FormRow | null>

  constructor(private kernel: Pick<Kernel, 'db' | 'clock' | 'config'>) {
    this.cache = new ScopedCache({
      name: 'forms',
      scopeOf: (id) => id,
      idOf: (id) => id,
      load: (id) => this.load(Number(id.slice(0, id.indexOf(':'))), id.slice(id.indexOf(':') + 1)),
      now: () => kernel.clock.ms(),
      ttlMs: TTL_MS,
      maxEntries: MAX_ENTRIES,
      maxBytes: cacheShare(kernel.config, 1 / 64),
      sizeOf: plainSize,
      invalidateOn: { 'form.changed': (e) => `${e.payload.space_id}:${e.payload.slug}` },
    })
  }

  get(spaceId: number, slug: string): FormRow | null | Promise<FormRow | null> {
    return this.cache.get(`${spaceId}:${slug}`)
  }

  private async load(spaceId: number, slug: string): Promise<FormRow | null> {
    const [row] = await this.kernel.db.db
      .select()
      .from(forms)
      .where(and(eq(forms.spaceId, spaceId), eq(forms.slug, slug), isNull(forms.archivedAt)))
      .limit(1)
    return row ?? null
  }
}
