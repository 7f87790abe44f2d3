import { t } from 'elysia'
import type { ReadContext, ReadStep, ReadStepMeta } from '../../kernel/read'
import { Int } from '../../kernel/schemas'
import { replaceMarkers, scanMarkers } from './markers'
import type { DatasourceRef, DatasourceStore, Entry } from './store'

/**
 * The read step of `$ds:` markers (spec 4.5).
 *
 * The render key must carry the revision of every datasource the served content references, but `select` runs
 * before any content is at hand (and steps above, personalisation, may swap the content in their `transform`). So the
 * step remembers, per Story snapshot object and per key prefix (locale + the earlier steps' key parts, which by the
 * read contract fix the content this step will see), which keys the content references. That memo is filled by
 * `transform` and lives exactly as long as the cached Story (a WeakMap on the object the Story cache replaces on
 * every publish).
 *
 * - Memo known, Space's refs in memory: `select` pushes `ds:<key>=<id>.<revision>,…` synchronously; a cached read
 *   stays a few map lookups, and a push or sync changes the key (and the body, and so the ETag).
 * - Memo not known yet (first read of this snapshot and variant): `select` adds nothing; the transform resolves the
 *   markers and notes the keys. Content without markers is then cached under the plain key, which is right for every
 *   later read too; content with markers is served but not cached (its revisions were not in the key), and from the
 *   next read on they are.
 */

const MAX_PREFIXES_PER_STORY = 64

interface Decision {
  prefix: string | null
}

/** What a Story variant references, and the render-key part last built from it (valid while the epoch holds). */
interface Memo {
  keys: string[]
  part: string | null
  refs: Map<string, DatasourceRef> | null
  epoch: number
}

/** `meta.datasource_refs`: how many markers of each datasource key the served content had resolved. */
const MARKER_META: ReadStepMeta = {
  schema: {
    datasource_refs: t.Record(t.String(), Int(), { description: 'Datasource key → markers resolved' }),
  },
  graphql: (f) => ({
    datasource_refs: f.field({
      type: 'JSON',
      description: 'Datasource key → how many `$ds:` markers of that key were resolved.',
      resolve: (m) => m.datasource_refs ?? {},
    }),
  }),
}

export function markerStep(store: DatasourceStore): ReadStep {
  const memo = new WeakMap<object, Map<string, Memo>>()

  const keyPart = (keys: string[], refs: Map<string, DatasourceRef>) => {
    let part = 'ds:'
    for (let i = 0; i < keys.length; i++) {
      const ref = refs.get(keys[i])
      part += `${i ? ',' : ''}${keys[i]}=${ref ? `${ref.id}.${ref.revision}` : '-'}`
    }
    return part
  }

  return {
    name: 'datasources',
    meta: MARKER_META,
    // Decides from the content's markers and the in-memory revisions, which change only through events.
    vary: () => '',
    select(ctx: ReadContext) {
      if (ctx.req.preview) return
      const prefix = ctx.keyParts.length ? `${ctx.lang}\u0000${ctx.keyParts.join('\u0000')}` : ctx.lang
      const m = memo.get(ctx.story)?.get(prefix)
      if (m === undefined) {
        ctx.decisions.datasources = { prefix } satisfies Decision
        return
      }
      if (!m.keys.length) return
      const spaceId = ctx.space.id
      const refs = store.refs(spaceId)
      if (refs instanceof Promise) {
        return refs.then((r) => {
          ctx.keyParts.push(keyPart(m.keys, r))
        })
      }
      // The common case: nothing changed since the last read of this variant, the same string again.
      const epoch = store.epoch(spaceId)
      if (m.part === null || m.refs !== refs || m.epoch !== epoch) {
        m.part = keyPart(m.keys, refs)
        m.refs = refs
        m.epoch = epoch
      }
      ctx.keyParts.push(m.part)
    },
    async transform(ctx, draft) {
      const counts = scanMarkers(draft.contentJson)
      const decision = ctx.decisions.datasources as Decision | undefined
      if (decision?.prefix != null) {
        let byPrefix = memo.get(ctx.story)
        if (!byPrefix) memo.set(ctx.story, (byPrefix = new Map()))
        if (byPrefix.size >= MAX_PREFIXES_PER_STORY) byPrefix.clear()
        byPrefix.set(decision.prefix, { keys: [...counts.keys()].sort(), part: null, refs: null, epoch: -1 })
        if (counts.size) draft.cacheable = false
      }
      const refsMeta: Record<string, number> = {}
      if (counts.size) {
        // Each unique key is loaded once per render, from the in-memory copy (a database read only on a new revision).
        const sets = new Map<string, Entry[] | null>()
        await Promise.all(
          [...counts.keys()].map(async (key) => {
            try {
              sets.set(key, (await store.entries(ctx.space.id, key))?.entries ?? null)
            } catch (err) {
              // Offline: the marker renders empty, and this body is not cached, so the next read tries again.
              sets.set(key, null)
              draft.cacheable = false
            }
          }),
        )
        draft.contentJson = replaceMarkers(draft.contentJson, sets)
        for (const [key, n] of counts) refsMeta[key] = n
      }
      draft.meta.datasource_refs = refsMeta
    },
  }
}
