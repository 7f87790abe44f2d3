import { and, eq, isNull } from 'drizzle-orm'
import { forms } from '../../../db/schema'
import type { Kernel } from '../../kernel/kernel'
import type { FormRow } from './service'

/** Every change arrives as `form.changed` (here at commit, elsewhere through NOTIFY); the expiry is a safety net. */
const TTL_MS = 60_000
const MAX_ENTRIES = 10_000

/** Live forms by (Space, slug) for the public submit: a cached form costs a Map lookup, no query. */
export class FormCache {
  private entries = new Map<string, { form: FormRow | null; expiresAt: number }>()
  private inflight = new Map<string, Promise<FormRow | null>>()
  private generation = 0

  constructor(private kernel: Pick<Kernel, 'db' | 'clock'>) {}

  get(spaceId: number, slug: string): FormRow | null | Promise<FormRow | null> {
    const key = `${spaceId}:${slug}`
    const e = this.entries.get(key)
    if (e && e.expiresAt > this.kernel.clock.ms()) return e.form
    const flight = `${this.generation}:${key}`
    let p = this.inflight.get(flight)
    if (!p) {
      const generation = this.generation
      p = this.load(spaceId, slug)
        .then((form) => {
          if (generation === this.generation) {
            if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!)
            this.entries.set(key, { form, expiresAt: this.kernel.clock.ms() + TTL_MS })
          }
          return form
        })
        .finally(() => this.inflight.delete(flight))
      this.inflight.set(flight, p)
    }
    return p
  }

  private async load(spaceId: number, slug: string): Promise<FormRow | null> {
    const [row] = await this.kernel.db.db
      .select()
      .from(forms)
      .where(and(eq(forms.spaceId, spaceId), eq(forms.slug, slug), isNull(forms.archivedAt)))
      .limit(1)
    return row ?? null
  }

  invalidate(spaceId: number, slug: string) {
    this.generation++
    this.entries.delete(`${spaceId}:${slug}`)
  }

  clear() {
    this.generation++
    this.entries.clear()
  }
}
