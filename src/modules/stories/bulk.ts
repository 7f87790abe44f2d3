// One action on many Stories, each in its own transaction. service.ts re-exports the public names.
import type { SpaceAccess } from '../../kernel/auth'
import { AppError, validationFailed } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import { archiveStory, deleteStory, publishStory, unpublishStory } from './lifecycle'
import type { BulkResult, StoryView } from './model'
import * as repo from './repo'
import { updateStory } from './save'

export type BulkAction = 'publish' | 'unpublish' | 'archive' | 'delete' | 'move'

/**
 * Applies one action to many Stories, each in its own transaction: a failure is reported for its item and does not
 * undo the others. Deletes run deepest first so a parent and its children can go in one call.
 */
export async function bulkStories(
  kernel: Kernel,
  access: SpaceAccess,
  input: { action: BulkAction; uuids: string[]; parent_uuid?: string | null },
): Promise<{ data: BulkResult[]; meta: { succeeded: number; failed: number } }> {
  if (input.action === 'move' && input.parent_uuid === undefined) {
    throw validationFailed({ parent_uuid: ['is required for move (null moves to the root).'] })
  }
  const uuids = [...new Set(input.uuids.map((u) => u.toLowerCase()))]
  let order = uuids
  if (input.action === 'delete') {
    const depthOf = new Map<string, number>()
    for (const u of uuids) depthOf.set(u, (await repo.findStory(kernel.db.db, access.space.id, u))?.depth ?? 0)
    order = [...uuids].sort((a, b) => depthOf.get(b)! - depthOf.get(a)!)
  }
  const results = new Map<string, BulkResult>()
  for (const uuid of order) {
    try {
      switch (input.action) {
        case 'publish':
          results.set(uuid, done(uuid, await publishStory(kernel, access, uuid)))
          break
        case 'unpublish':
          results.set(uuid, done(uuid, await unpublishStory(kernel, access, uuid)))
          break
        case 'archive':
          results.set(uuid, done(uuid, await archiveStory(kernel, access, uuid)))
          break
        case 'move':
          results.set(uuid, done(uuid, await updateStory(kernel, access, uuid, { parent_uuid: input.parent_uuid })))
          break
        case 'delete':
          await deleteStory(kernel, access, uuid)
          results.set(uuid, { uuid, ok: true, status: 'deleted' })
          break
      }
    } catch (err) {
      if (!(err instanceof AppError)) throw err
      const r: BulkResult = { uuid, ok: false, status_code: err.status, error: err.code, message: err.message }
      if (err.fields) r.errors = err.fields
      results.set(uuid, r)
    }
  }
  const data = uuids.map((u) => results.get(u)!)
  const succeeded = data.filter((r) => r.ok).length
  return { data, meta: { succeeded, failed: data.length - succeeded } }
}

const done = (uuid: string, v: StoryView): BulkResult => ({ uuid, ok: true, status: v.status, full_path: v.full_path })
