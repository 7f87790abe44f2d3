// The entry set of a datasource: replaced atomically by a pull or a push (revision, `datasource.changed`,
// `datasource.synced`), and read a page at a time. service.ts re-exports the public names.
import { and, eq, lt } from 'drizzle-orm'
import { datasourceEntrySets, datasourcePushSignatures, datasources } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { sha256Hex } from '../../kernel/crypto'
import { notFound } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { DatasourceErrors, type EntriesPageView } from './model'
import type { SignedPush } from './push'
import { KEY_RE, type Row } from './settings'
import type { DatasourceStore, Entry } from './store'

/**
 * Replaces the entry set atomically with the datasource's new state; the revision moves only when the data differs.
 * Emits `datasource.synced` (and `datasource.changed` for the caches). Null when the datasource is gone.
 */
export async function storeEntries(kernel: Kernel, id: number, entries: Entry[], signed?: SignedPush): Promise<{ row: Row; changed: boolean } | null> {
  const json = JSON.stringify(entries)
  const hash = sha256Hex(json)
  const now = kernel.clock.now()
  return transact(kernel, async (tx, emit) => {
    const [current] = await tx.select().from(datasources).where(eq(datasources.id, id)).for('update').limit(1)
    if (!current) return null
    if (signed) {
      // Under the datasource's row lock, so two copies of one push racing on two instances meet here: the second
      // finds the first's signature and is refused. Expired signatures of this datasource go first.
      await tx.delete(datasourcePushSignatures).where(and(eq(datasourcePushSignatures.datasourceId, id), lt(datasourcePushSignatures.expiresAt, now)))
      const fresh = await tx
        .insert(datasourcePushSignatures)
        .values({ datasourceId: id, signature: signed.signature, expiresAt: signed.expiresAt })
        .onConflictDoNothing()
        .returning({ signature: datasourcePushSignatures.signature })
      if (!fresh.length) {
        throw DatasourceErrors.pushReplayed(
          'This signed push was accepted before (a replay). Nothing was stored; sign every push with a fresh X-Service-Timestamp.',
        )
      }
    }
    const changed = current.dataHash !== hash
    const [row] = await tx
      .update(datasources)
      .set({
        revision: changed ? current.revision + 1 : current.revision,
        dataHash: hash,
        entryCount: entries.length,
        status: 'ok',
        lastSyncedAt: now,
        lastError: null,
        updatedAt: now,
      })
      .where(eq(datasources.id, id))
      .returning()
    if (changed) {
      await tx
        .insert(datasourceEntrySets)
        .values({ datasourceId: id, entries })
        .onConflictDoUpdate({ target: datasourceEntrySets.datasourceId, set: { entries } })
      emit({ type: 'datasource.changed', spaceId: row.spaceId, payload: { key: row.key, id: row.id, revision: row.revision } })
    }
    emit({
      type: 'datasource.synced',
      spaceId: row.spaceId,
      payload: { datasource: { key: row.key, label: row.label, type: row.type, entries: row.entryCount, synced_at: now.toISOString() } },
    })
    return { row, changed }
  })
}

function containsText(v: unknown, needle: string, depth = 0): boolean {
  if (typeof v === 'string') return v.toLowerCase().includes(needle)
  if (depth > 32 || typeof v !== 'object' || v === null) return false
  for (const x of Array.isArray(v) ? v : Object.values(v)) if (containsText(x, needle, depth + 1)) return true
  return false
}

/**
 * A page of entries as the public surface sees them (the in-memory copy markers resolve from). `q` matches
 * case-insensitively in any string value, nested ones included. Null when there is no such datasource.
 */
export async function entriesPage(
  store: DatasourceStore,
  spaceId: number,
  key: string,
  opts: { page?: number; perPage?: number; q?: string } = {},
): Promise<EntriesPageView | null> {
  const set = await store.entries(spaceId, key)
  if (!set) return null
  const page = Math.max(1, opts.page ?? 1)
  const perPage = Math.min(100, Math.max(1, opts.perPage ?? 25))
  const needle = opts.q?.trim().toLowerCase()
  const all = needle ? set.entries.filter((e) => containsText(e, needle)) : set.entries
  return {
    data: all.slice((page - 1) * perPage, page * perPage),
    meta: { total: all.length, page, per_page: perPage, revision: set.revision },
  }
}

export async function listEntries(
  kernel: Kernel,
  store: DatasourceStore,
  access: SpaceAccess,
  key: string,
  opts: { page?: number; perPage?: number; q?: string },
): Promise<EntriesPageView> {
  if (!KEY_RE.test(key)) throw notFound('Datasource')
  const page = await entriesPage(store, access.space.id, key, opts)
  if (!page) throw notFound('Datasource')
  return page
}
