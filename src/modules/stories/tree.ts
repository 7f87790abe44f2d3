// The Story tree for the editors: a Story's children and the whole tree by root, level by level within a node budget.
// service.ts re-exports the public names.
import type { SpaceAccess } from '../../kernel/auth'
import { pageOf } from '../../kernel/http'
import type { Kernel } from '../../kernel/kernel'
import type { TreeNode } from './model'
import * as repo from './repo'
import type { TreeNodeRow } from './repo'
import { storyOrFail } from './rules'

export const TREE_PAGE = { perPage: 25, max: 100 }
/** Nodes in one children/tree response; deeper levels are cut (meta.truncated) rather than answering megabytes. */
export const MAX_TREE_NODES = 5000

const node = (r: TreeNodeRow): TreeNode => ({
  uuid: r.uuid,
  name: r.name,
  slug: r.slug,
  full_path: r.fullPath,
  is_folder: r.isFolder,
  status: r.status,
  has_unpublished_changes: r.hasUnpublishedChanges,
})

type Branch = { children?: TreeNode[]; has_children?: boolean }

/** Level by level below `roots`, one indexed query per level, up to `depth` levels or MAX_TREE_NODES nodes. */
async function growTree(kernel: Kernel, spaceId: number, roots: { id: number; node: Branch }[], depth: number) {
  let frontier = roots
  let budget = MAX_TREE_NODES - roots.length
  let truncated = false
  for (let level = 0; level < depth && frontier.length; level++) {
    const rows = budget > 0 ? await repo.childrenOf(kernel.db.db, spaceId, frontier.map((f) => f.id), budget + 1) : []
    if (rows.length > budget) {
      truncated = true
      break
    }
    budget -= rows.length
    const byParent = new Map(frontier.map((f) => [f.id, f.node]))
    for (const f of frontier) f.node.children = []
    const next: { id: number; node: Branch }[] = []
    for (const r of rows) {
      const n = node(r)
      byParent.get(r.parentId!)!.children!.push(n)
      next.push({ id: r.id, node: n })
    }
    frontier = next
  }
  // The last level loaded (or the level where the budget ran out) says whether there is more below.
  const open = frontier.filter((f) => f.node.children === undefined)
  const more = await repo.withChildren(kernel.db.db, spaceId, open.map((f) => f.id))
  for (const f of open) f.node.has_children = more.has(f.id)
  return truncated
}

export async function storyChildren(kernel: Kernel, access: SpaceAccess, uuid: string, depth: number) {
  const s = await storyOrFail(kernel, access, uuid)
  const root: { id: number; node: Branch } = { id: s.id, node: {} }
  const truncated = await growTree(kernel, access.space.id, [root], depth)
  return { data: root.node.children ?? [], meta: { depth, truncated } }
}

/** The whole tree, paginated by root Story (archived Stories and their subtrees are left out). */
export async function storyTree(kernel: Kernel, access: SpaceAccess, query: { page?: number; per_page?: number; depth: number }) {
  const page = pageOf(query.page, query.per_page, TREE_PAGE)
  const { rows, total } = await repo.rootsPage(kernel.db.db, access.space.id, page.perPage, page.offset)
  const roots = rows.map((r) => ({ id: r.id, node: node(r) }))
  const truncated = await growTree(kernel, access.space.id, roots, query.depth - 1)
  return {
    data: roots.map((r) => r.node),
    meta: { total, page: page.page, per_page: page.perPage, depth: query.depth, truncated },
  }
}
