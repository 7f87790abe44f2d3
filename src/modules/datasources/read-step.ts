import type { ReadContext, ReadStep } from '../../kernel/read'
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

export function markerStep(store: DatasourceStore): ReadStep {
  const memo = new WeakMap<object, Map<string, string[]>>()

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
    select(ctx: ReadContext) {
      if (ctx.req.preview) return
      const prefix = ctx.keyParts.length ? `${ctx.lang}\u0000${ctx.keyParts.join('\u0000')}` : ctx.lang
      const keys = memo.get(ctx.story)?.get(prefix)
      if (keys === undefined) {
        ctx.decisions.datasources = { prefix } satisfies Decision
        return
      }
      if (!keys.length) return
      const refs = store.refs(ctx.space.id)
      if (refs instanceof Promise) {
        return refs.then((r) => {
          ctx.keyParts.push(keyPart(keys, r))
        })
      }
      ctx.keyParts.push(keyPart(keys, refs))
    },
    async transform(ctx, draft) {
      const counts = scanMarkers(draft.contentJson)
      const decision = ctx.decisions.datasources as Decision | undefined
      if (decision?.prefix != null) {
        let byPrefix = memo.get(ctx.story)
        if (!byPrefix) memo.set(ctx.story, (byPrefix = new Map()))
        if (byPrefix.size >= MAX_PREFIXES_PER_STORY) byPrefix.clear()
        byPrefix.set(decision.prefix, [...counts.keys()].sort())
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
