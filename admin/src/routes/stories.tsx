import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi, Link, useNavigate, useRouter } from '@tanstack/react-router'
import { createContext, type FormEvent, memo, useContext, useEffect, useMemo, useRef, useState } from 'react'
import { ApiFailure, api, type Schemas, unwrap } from '../api/client'
import { archivedStoriesQuery, storySearchQuery, treeQuery } from '../api/queries'
import { useCan } from '../api/roles'
import { CatalogError } from '../components/catalog-error'
import { DeleteStoryDialog } from '../components/delete-story-dialog'
import { GettingStarted } from '../components/getting-started'
import { ScheduleMark, type SchedulePlan, spaceSchedulesQuery } from '../components/schedule'
import { Button, Dialog, EmptyState, ErrorNotice, Loading, Skeleton, StatusBadge, storyState, TextField } from '../components/ui'
import { fieldErrors, formatNumber, t } from '../i18n'
import { queryKeys } from '../api/keys'

const route = getRouteApi('/app/spaces/$space/')

type Node = Schemas['TreeNode']
interface Parent {
  uuid: string
  label: string
}

/** A slug from a name: what an editor would type (lower case, dashes), still checked by the API. */
export const slugify = (name: string) =>
  name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100)

export function StoryTreeScreen() {
  const { space } = route.useParams()
  const { q, new: wanted } = route.useSearch()
  const navigate = useNavigate()
  const tree = useQuery(treeQuery(space))
  const search = useQuery({ ...storySearchQuery(space, q ?? ''), enabled: !!q })
  const [creating, setCreating] = useState<null | { folder: boolean }>(null)
  const [renaming, setRenaming] = useState<null | { uuid: string; name: string }>(null)
  const [deleting, setDeleting] = useState<null | { uuid: string; name: string }>(null)
  // Write controls only for a role that may write (whoami's role against the operations' x-min-role).
  const canWrite = useCan(space, 'POST', '/v1/spaces/{space}/stories')
  const canDelete = useCan(space, 'DELETE', '/v1/spaces/{space}/stories/{uuid}')
  // The command palette's New Story / New folder: open the dialog once, and take the wish out of the address.
  useEffect(() => {
    if (!wanted || !canWrite) return
    setCreating({ folder: wanted === 'folder' })
    void navigate({ to: '/spaces/$space', params: { space }, search: { q }, replace: true })
  }, [wanted, canWrite, navigate, space, q])
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const [bulkNotice, setBulkNotice] = useState<string | null>(null)
  const queryClient = useQueryClient()
  const move = useMutation({
    mutationFn: (a: { uuid: string; parent: string | null }) =>
      unwrap(api.POST('/v1/spaces/{space}/stories/bulk', { params: { path: { space } }, body: { action: 'move', uuids: [a.uuid], parent_uuid: a.parent } })),
    onSuccess: async (res) => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.space(space) })
      const r = res.data[0]
      setBulkNotice(r?.ok ? t('stories.moved') : t('stories.notMoved', { reason: r && 'message' in r ? r.message : '' }))
    },
  })
  // The Space's planned publishes, read once for the whole tree (not one query per row).
  const schedules = useQuery(spaceSchedulesQuery(space))
  const plans = useMemo(() => {
    const by = new Map<string, SchedulePlan[]>()
    for (const p of schedules.data?.data ?? []) by.set(p.story_uuid, [...(by.get(p.story_uuid) ?? []), p])
    return by
  }, [schedules.data])
  const actions: TreeActions = {
    plans,
    space,
    canWrite,
    canDelete,
    selected,
    toggle: (uuid) =>
      setSelected((prev) => {
        const next = new Set(prev)
        if (next.has(uuid)) next.delete(uuid)
        else next.add(uuid)
        return next
      }),
    onRename: setRenaming,
    onDelete: setDeleting,
    onDrop: (uuid, parent) => move.mutate({ uuid, parent }),
  }

  const { folders, rows } = useMemo(() => {
    const folders: Parent[] = []
    const walk = (nodes: Node[], prefix: string) => {
      for (const n of nodes) {
        if (n.is_folder) folders.push({ uuid: n.uuid, label: `${prefix}${n.name}` })
        if (n.children) walk(n.children, `${prefix}${n.name} / `)
      }
    }
    if (tree.data) walk(tree.data.data, '')
    return { folders, rows: tree.data ? flatten(tree.data.data) : [] }
  }, [tree.data])

  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="flex-1 text-2xl font-semibold">{t('nav.stories')}</h1>
        <form
          role="search"
          onSubmit={(e) => {
            e.preventDefault()
            const value = String(new FormData(e.currentTarget).get('q') ?? '').trim()
            void navigate({ to: '/spaces/$space', params: { space }, search: value ? { q: value } : {} })
          }}
          className="flex items-center gap-2"
        >
          <label htmlFor="story-search" className="sr-only">
            {t('stories.searchLabel')}
          </label>
          <input
            id="story-search"
            name="q"
            type="search"
            defaultValue={q ?? ''}
            placeholder={t('stories.searchPlaceholder')}
            className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm"
          />
          <Button type="submit">{t('stories.search')}</Button>
        </form>
        {canWrite ? (
          <>
            <Button onClick={() => setCreating({ folder: true })}>{t('palette.newFolder')}</Button>
            <Button tone="primary" onClick={() => setCreating({ folder: false })}>
              {t('palette.newStory')}
            </Button>
          </>
        ) : null}
      </div>

      <GettingStarted space={space} />

      {q ? (
        <section aria-label={t('stories.results')} className="rounded-lg bg-white p-4 ring-1 ring-slate-200">
          <div className="mb-2 flex items-center justify-between">
            <h2 className="font-semibold">{t('stories.resultsFor', { q })}</h2>
            <Link to="/spaces/$space" params={{ space }} search={{}} className="text-sm text-indigo-800 underline">
              {t('stories.clearSearch')}
            </Link>
          </div>
          {search.isPending ? <Loading what={t('stories.searching')} /> : null}
          <ErrorNotice error={search.error} />
          {search.data && search.data.data.length === 0 ? <p className="text-sm text-slate-700">{t('stories.noResults', { q })}</p> : null}
          <ul className="divide-y divide-slate-100">
            {search.data?.data.map((s) => (
              <li key={s.uuid} className="flex items-center gap-2 py-2">
                <StoryLink space={space} node={s} />
                <span className="text-xs text-slate-600">{s.full_path}</span>
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      {tree.isPending ? <Skeleton lines={6} /> : null}
      <ErrorNotice error={tree.error} onRetry={() => tree.refetch()} />
      {tree.data && tree.data.data.length === 0 ? (
        <EmptyState title={t('stories.emptyTitle')}>{t('stories.emptyText')}</EmptyState>
      ) : null}
      <div aria-live="polite" className="text-sm text-emerald-800">
        {bulkNotice}
      </div>
      <ErrorNotice error={move.error} />
      {selected.size ? (
        <BulkBar
          space={space}
          selected={[...selected]}
          folders={folders}
          onDone={(m) => {
            setSelected(new Set())
            setBulkNotice(m)
          }}
        />
      ) : null}
      {tree.data && tree.data.data.length > 0 ? (
        <TreeContext.Provider value={actions}>
          <p className="text-xs text-slate-600">
            {t('stories.count', { count: formatNumber(rows.length) })}
            {tree.data.meta.loaded < tree.data.meta.total ? ` ${t('stories.moreThanShown', { count: formatNumber(tree.data.meta.total - tree.data.meta.loaded) })}` : ''}
          </p>
          {rows.length > WINDOW_FROM ? (
            <WindowedTree rows={rows} label={t('stories.tree')} />
          ) : (
            <ul aria-label={t('stories.tree')} className="rounded-lg bg-white p-2 ring-1 ring-slate-200">
              {tree.data.data.map((n) => (
                <TreeItem key={n.uuid} node={n} depth={0} />
              ))}
            </ul>
          )}
          <TopLevelDrop onDrop={(uuid) => actions.onDrop(uuid, null)} />
        </TreeContext.Provider>
      ) : null}

      <ArchivedStories space={space} />

      <CreateStoryDialog space={space} folders={folders} mode={creating} onClose={() => setCreating(null)} />
      <RenameDialog space={space} target={renaming} onClose={() => setRenaming(null)} />
      <DeleteStoryDialog
        space={space}
        target={deleting}
        onClose={() => setDeleting(null)}
        onDeleted={(name) => {
          setDeleting(null)
          setBulkNotice(t('stories.deleted', { name }))
        }}
      />
    </div>
  )
}

/** Folder or page, drawn inline (no icon font, no emoji font needed). */
function Icon({ folder }: { folder: boolean }) {
  return (
    <svg aria-hidden="true" viewBox="0 0 16 16" className="h-4 w-4 shrink-0 fill-none stroke-slate-500" strokeWidth="1.5">
      {folder ? <path d="M1.5 4.5v8h13v-6.5h-7l-1.5-1.5z" /> : <path d="M3.5 1.5h6l3 3v10h-9zM9.5 1.5v3h3" />}
    </svg>
  )
}

/** Drop here to move a Story or folder to the top level. */
function TopLevelDrop({ onDrop }: { onDrop: (uuid: string) => void }) {
  const [over, setOver] = useState(false)
  return (
    <div
      onDragOver={(e) => {
        if (!e.dataTransfer.types.includes(DRAG_TYPE)) return
        e.preventDefault()
        setOver(true)
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault()
        setOver(false)
        const uuid = e.dataTransfer.getData(DRAG_TYPE)
        if (uuid) onDrop(uuid)
      }}
      data-drop="top-level"
      className={`rounded-lg border border-dashed px-3 py-2 text-center text-xs text-slate-600 ${over ? 'border-indigo-500 bg-indigo-50' : 'border-slate-300'}`}
    >
      {t('stories.dropHint')}
    </div>
  )
}

/** Archived Stories leave the tree; they are listed here, on demand. */
function ArchivedStories({ space }: { space: string }) {
  const [open, setOpen] = useState(false)
  const archived = useQuery({ ...archivedStoriesQuery(space), enabled: open })
  return (
    <details className="rounded-lg bg-white p-3 ring-1 ring-slate-200" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary className="cursor-pointer text-sm font-semibold">{t('stories.archived')}</summary>
      {open && archived.isPending ? <Skeleton lines={2} /> : null}
      <ErrorNotice error={archived.error} />
      {archived.data && archived.data.data.length === 0 ? <p className="mt-2 text-sm text-slate-700">{t('stories.nothingArchived')}</p> : null}
      <ul className="mt-2 divide-y divide-slate-100" aria-label={t('stories.archived')}>
        {archived.data?.data.map((s) => (
          <li key={s.uuid} className="flex items-center gap-2 py-1.5">
            <StoryLink space={space} node={s} />
            <span className="text-xs text-slate-600">{s.full_path}</span>
          </li>
        ))}
      </ul>
    </details>
  )
}

/**
 * A link to a Story's editor: a plain anchor that the router follows in the page (Ctrl/⌘+click, middle click and
 * Shift+click open a tab, which signs itself in from the admin session). Cheaper than the router's `Link`, which
 * matters for the thousands of rows a big tree scrolls through.
 */
function StoryAnchor({ space, uuid, name }: { space: string; uuid: string; name: string }) {
  const router = useRouter()
  return (
    <a
      href={`${router.basepath}/spaces/${encodeURIComponent(space)}/stories/${encodeURIComponent(uuid)}`}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
        e.preventDefault()
        void router.navigate({ to: '/spaces/$space/stories/$uuid', params: { space, uuid }, search: {} })
      }}
      className="font-medium text-indigo-800 underline"
    >
      {name}
    </a>
  )
}

function StoryLink({ space, node }: { space: string; node: Pick<Node, 'uuid' | 'name' | 'is_folder' | 'status' | 'has_unpublished_changes'> }) {
  return (
    <>
      <Icon folder={node.is_folder} />
      {node.is_folder ? <span className="font-medium">{node.name}</span> : <StoryAnchor space={space} uuid={node.uuid} name={node.name} />}
      {node.is_folder ? null : <StatusBadge state={storyState(node)} />}
    </>
  )
}

interface TreeActions {
  space: string
  /** The Space's planned publishes and unpublishes by Story. */
  plans: Map<string, SchedulePlan[]>
  /** The caller may change Stories (else the tree has no checkbox, rename or drag). */
  canWrite: boolean
  canDelete: boolean
  selected: Set<string>
  toggle: (uuid: string) => void
  onRename: (t: { uuid: string; name: string }) => void
  onDelete: (t: { uuid: string; name: string }) => void
  /** Drag and drop: move `uuid` into the folder `parent` (null: the top level). */
  onDrop: (uuid: string, parent: string | null) => void
}
const TreeContext = createContext<TreeActions | null>(null)
const DRAG_TYPE = 'application/x-content-service-story'

/**
 * One row of the tree: checkbox, name, status, path, schedule mark, rename and delete; a folder takes drops. `fixed`:
 * a row of the windowed list (one line of a fixed height, the path cut with an ellipsis).
 */
const TreeRow = memo(function TreeRow({ node, depth, fixed }: { node: Node; depth: number; fixed?: boolean }) {
  const tree = useContext(TreeContext)!
  const [over, setOver] = useState(false)
  const dropProps = node.is_folder
    ? {
        onDragOver: (e: React.DragEvent) => {
          if (!e.dataTransfer.types.includes(DRAG_TYPE)) return
          e.preventDefault()
          setOver(true)
        },
        onDragLeave: () => setOver(false),
        onDrop: (e: React.DragEvent) => {
          e.preventDefault()
          setOver(false)
          const uuid = e.dataTransfer.getData(DRAG_TYPE)
          if (uuid && uuid !== node.uuid) tree.onDrop(uuid, node.uuid)
        },
      }
    : {}
  return (
    <div
      draggable={tree.canWrite}
      onDragStart={(e) => {
        e.dataTransfer.setData(DRAG_TYPE, node.uuid)
        e.dataTransfer.effectAllowed = 'move'
      }}
      {...dropProps}
      data-tree-uuid={node.uuid}
      className={`group flex items-center gap-2 rounded px-2 py-1.5 hover:bg-slate-50 ${fixed ? 'h-9 overflow-hidden whitespace-nowrap' : ''} ${over ? 'bg-indigo-50 ring-2 ring-indigo-400' : ''}`}
      style={{ paddingLeft: `${depth * 1.25 + 0.5}rem` }}
    >
      {tree.canWrite ? (
        <input
          type="checkbox"
          checked={tree.selected.has(node.uuid)}
          onChange={() => tree.toggle(node.uuid)}
          aria-label={t('stories.select', { name: node.name })}
          className="h-4 w-4 shrink-0 accent-indigo-700"
        />
      ) : null}
      <StoryLink space={tree.space} node={node} />
      <span className={`text-xs text-slate-600 ${fixed ? 'min-w-0 truncate' : ''}`}>{node.full_path}</span>
      {node.is_folder ? null : <ScheduleMark plans={tree.plans.get(node.uuid) ?? NO_PLANS} />}
      {tree.canWrite ? (
        <button
          type="button"
          onClick={() => tree.onRename({ uuid: node.uuid, name: node.name })}
          className="ml-auto text-xs text-slate-700 underline"
          aria-label={t('stories.renameOf', { name: node.name })}
        >
          {t('stories.rename')}
        </button>
      ) : null}
      {tree.canDelete ? (
        <button
          type="button"
          onClick={() => tree.onDelete({ uuid: node.uuid, name: node.name })}
          className={`${tree.canWrite ? '' : 'ml-auto '}text-xs text-red-800 underline`}
          aria-label={t('stories.deleteOf', { name: node.name })}
        >
          {t('stories.delete')}
        </button>
      ) : null}
    </div>
  )
})

function TreeItem({ node, depth }: { node: Node; depth: number }) {
  return (
    <li>
      <TreeRow node={node} depth={depth} />
      {node.children?.length ? (
        <ul>
          {node.children.map((c) => (
            <TreeItem key={c.uuid} node={c} depth={depth + 1} />
          ))}
        </ul>
      ) : null}
    </li>
  )
}

/** Above this many rows the tree is drawn as a window over the flattened list (only the rows near the screen). */
const WINDOW_FROM = 300
/** The height of a row of the windowed list (`h-9`), and the rows drawn beyond each edge of the screen. */
const ROW_PX = 36
const OVERSCAN = 12

interface FlatRow {
  node: Node
  depth: number
}

/** The tree in display order, each node with its depth. */
function flatten(nodes: Node[]): FlatRow[] {
  const out: FlatRow[] = []
  const walk = (list: Node[], depth: number) => {
    for (const n of list) {
      out.push({ node: n, depth })
      if (n.children?.length) walk(n.children, depth + 1)
    }
  }
  walk(nodes, 0)
  return out
}

/**
 * A big tree (thousands of Stories): one list whose height is that of every row, drawing only the rows near the
 * screen (absolutely placed, a fixed height each), re-chosen as the page scrolls. Drawing all of them would block the
 * page for seconds; this keeps every frame short however many Stories the Space has.
 */
function WindowedTree({ rows, label }: { rows: FlatRow[]; label: string }) {
  const list = useRef<HTMLUListElement>(null)
  const [range, setRange] = useState({ start: 0, end: 2 * OVERSCAN, slots: 4 * OVERSCAN })
  useEffect(() => {
    let frame = 0
    const update = () => {
      frame = 0
      const el = list.current
      if (!el) return
      const top = el.getBoundingClientRect().top
      const start = Math.max(0, Math.floor(-top / ROW_PX) - OVERSCAN)
      const end = Math.min(rows.length, Math.max(start, Math.ceil((window.innerHeight - top) / ROW_PX)) + OVERSCAN)
      // At most this many rows are drawn at once: a row keeps the key `index % slots` while it stays drawn, and the
      // row scrolling in takes the key (and the elements) of the one that left, so scrolling updates rows instead of
      // making new ones.
      const slots = Math.ceil(window.innerHeight / ROW_PX) + 2 * OVERSCAN + 2
      setRange((r) => (r.start === start && r.end === end && r.slots === slots ? r : { start, end, slots }))
    }
    const onScroll = () => {
      if (!frame) frame = requestAnimationFrame(update)
    }
    update()
    window.addEventListener('scroll', onScroll, { passive: true })
    window.addEventListener('resize', onScroll)
    return () => {
      cancelAnimationFrame(frame)
      window.removeEventListener('scroll', onScroll)
      window.removeEventListener('resize', onScroll)
    }
  }, [rows.length])
  return (
    <ul ref={list} aria-label={label} className="relative rounded-lg bg-white p-2 ring-1 ring-slate-200" style={{ height: rows.length * ROW_PX + 16 }}>
      {rows.slice(range.start, range.end).map((r, i) => (
        <li key={(range.start + i) % range.slots} className="absolute right-2 left-2" style={{ top: (range.start + i) * ROW_PX + 8, height: ROW_PX }}>
          <TreeRow node={r.node} depth={r.depth} fixed />
        </li>
      ))}
    </ul>
  )
}

const NO_PLANS: SchedulePlan[] = []

type BulkAction = 'publish' | 'unpublish' | 'move' | 'archive' | 'delete'

/** The bar of actions on the selected Stories (the bulk API: per-item results). */
function BulkBar({ space, selected, folders, onDone }: { space: string; selected: string[]; folders: Parent[]; onDone: (message: string) => void }) {
  const queryClient = useQueryClient()
  const [confirm, setConfirm] = useState<BulkAction | null>(null)
  const [target, setTarget] = useState('')
  const run = useMutation({
    mutationFn: (a: { action: BulkAction; uuids: string[]; parent_uuid?: string | null }) =>
      unwrap(api.POST('/v1/spaces/{space}/stories/bulk', { params: { path: { space } }, body: a })),
    onSuccess: async (res, a) => {
      setConfirm(null)
      await queryClient.invalidateQueries({ queryKey: queryKeys.space(space) })
      const failed = res.data.filter((r) => !r.ok).map((r) => ('message' in r ? r.message : ''))
      if (a.action === 'archive' || a.action === 'delete') {
        onDone(`${t('bulk.done', { ok: formatNumber(res.meta.succeeded), failed: formatNumber(res.meta.failed) })}${failed.length ? ` ${failed.join(' ')}` : ''}`)
        return
      }
      const count = formatNumber(res.meta.succeeded)
      onDone(
        res.meta.failed
          ? t(`stories.bulk.${a.action}.partial`, { count, failed: formatNumber(res.meta.failed), reasons: failed.join(' ') })
          : t(`stories.bulk.${a.action}.done`, { count }),
      )
    },
  })
  return (
    <div role="toolbar" aria-label={t('stories.selected')} className="flex flex-wrap items-center gap-2 rounded-lg bg-indigo-50 px-3 py-2 ring-1 ring-indigo-200">
      <span className="text-sm font-medium">{t('stories.selectedCount', { count: formatNumber(selected.length) })}</span>
      <Button onClick={() => setConfirm('publish')}>{t('stories.publish')}</Button>
      <Button onClick={() => setConfirm('unpublish')}>{t('stories.unpublish')}</Button>
      <Button onClick={() => setConfirm('move')}>{t('stories.moveTo')}</Button>
      <Button onClick={() => setConfirm('archive')}>{t('bulk.archive')}</Button>
      <Button tone="danger" onClick={() => setConfirm('delete')}>
        {t('bulk.delete')}
      </Button>
      <ErrorNotice error={run.error} />
      <Dialog
        open={confirm === 'archive' || confirm === 'delete'}
        title={t(confirm === 'delete' ? 'bulk.confirm.delete' : 'bulk.confirm.archive', { count: formatNumber(selected.length) })}
        onClose={() => setConfirm(null)}
      >
        <p className="text-sm">{t(confirm === 'delete' ? 'bulk.explain.delete' : 'bulk.explain.archive')}</p>
        <div className="flex justify-end gap-2">
          <Button onClick={() => setConfirm(null)}>{t('common.cancel')}</Button>
          <Button tone="danger" disabled={run.isPending} onClick={() => confirm && run.mutate({ action: confirm, uuids: selected })}>
            {t(confirm === 'delete' ? 'bulk.delete' : 'bulk.archive')}
          </Button>
        </div>
      </Dialog>
      <Dialog
        open={confirm === 'publish' || confirm === 'unpublish' || confirm === 'move'}
        title={t(`stories.bulk.${confirm === 'move' || confirm === 'unpublish' ? confirm : 'publish'}.title`, { count: formatNumber(selected.length) })}
        onClose={() => setConfirm(null)}
      >
        {confirm === 'move' ? (
          <div className="flex flex-col gap-1">
            <label htmlFor="bulk-target" className="text-sm font-medium">
              {t('stories.intoFolder')}
            </label>
            <select id="bulk-target" value={target} onChange={(e) => setTarget(e.target.value)} className="rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm">
              <option value="">{t('stories.topLevel')}</option>
              {folders
                .filter((f) => !selected.includes(f.uuid))
                .map((f) => (
                  <option key={f.uuid} value={f.uuid}>
                    {f.label}
                  </option>
                ))}
            </select>
          </div>
        ) : (
          <p className="text-sm">
            {confirm === 'publish' ? t('stories.bulk.publish.text') : t('stories.bulk.unpublish.text')}
          </p>
        )}
        <div className="flex justify-end gap-2">
          <Button onClick={() => setConfirm(null)}>{t('common.cancel')}</Button>
          <Button
            tone="primary"
            disabled={run.isPending}
            onClick={() => confirm && run.mutate({ action: confirm, uuids: selected, ...(confirm === 'move' ? { parent_uuid: target || null } : {}) })}
          >
            {confirm === 'move' ? t('stories.move') : confirm === 'publish' ? t('stories.publish') : t('stories.unpublish')}
          </Button>
        </div>
      </Dialog>
    </div>
  )
}

/** The API's keyed errors of a Story's name and slug as sentences (the server's own words for any other field). */
const STORY_FIELD_ERRORS = { name: 'stories.error.name', slug: 'stories.error.slug', full_path: 'stories.error.slug' } as const

function CreateStoryDialog({ space, folders, mode, onClose }: { space: string; folders: Parent[]; mode: null | { folder: boolean }; onClose: () => void }) {
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const [name, setName] = useState('')
  const [slug, setSlug] = useState('')
  const [slugTouched, setSlugTouched] = useState(false)
  const [errors, setErrors] = useState<Record<string, string[]>>({})
  const close = () => {
    setName('')
    setSlug('')
    setSlugTouched(false)
    setErrors({})
    create.reset()
    onClose()
  }
  const create = useMutation({
    mutationFn: (body: { name: string; slug: string; is_folder: boolean; parent_uuid: string | null }) =>
      unwrap(api.POST('/v1/spaces/{space}/stories', { params: { path: { space } }, body })),
    onSuccess: async ({ data }) => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.space(space) })
      close()
      if (!data.is_folder) await navigate({ to: '/spaces/$space/stories/$uuid', params: { space, uuid: data.uuid }, search: {} })
    },
    onError: (err) => setErrors(err instanceof ApiFailure ? fieldErrors(err, STORY_FIELD_ERRORS) : {}),
  })
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const parent = String(new FormData(e.currentTarget).get('parent') ?? '')
    setErrors({})
    create.mutate({ name, slug: slugTouched ? slug : slugify(name), is_folder: !!mode?.folder, parent_uuid: parent || null })
  }
  const title = mode?.folder ? t('palette.newFolder') : t('palette.newStory')
  return (
    <Dialog open={mode !== null} title={title} onClose={close}>
      <form onSubmit={submit} className="flex flex-col gap-3" noValidate>
        <TextField label={t('stories.name')} name="name" value={name} onChange={(e) => setName(e.target.value)} required autoFocus errors={errors.name} />
        <TextField
          label={t('stories.slug')}
          name="slug"
          value={slugTouched ? slug : slugify(name)}
          onChange={(e) => {
            setSlugTouched(true)
            setSlug(e.target.value)
          }}
          hint={t('stories.slugHint')}
          errors={errors.slug ?? errors.full_path}
        />
        <div className="flex flex-col gap-1">
          <label htmlFor="story-parent" className="text-sm font-medium">
            {t('stories.folder')}
          </label>
          <select id="story-parent" name="parent" className="rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm">
            <option value="">{t('stories.topLevel')}</option>
            {folders.map((f) => (
              <option key={f.uuid} value={f.uuid}>
                {f.label}
              </option>
            ))}
          </select>
        </div>
        <ErrorNotice error={create.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={close}>{t('common.cancel')}</Button>
          <Button tone="primary" type="submit" disabled={create.isPending || !name.trim()}>
            {t('stories.create')}
          </Button>
        </div>
      </form>
    </Dialog>
  )
}

function RenameDialog({ space, target, onClose }: { space: string; target: null | { uuid: string; name: string }; onClose: () => void }) {
  const queryClient = useQueryClient()
  const [errors, setErrors] = useState<Record<string, string[]>>({})
  const rename = useMutation({
    mutationFn: (name: string) => unwrap(api.PUT('/v1/spaces/{space}/stories/{uuid}', { params: { path: { space, uuid: target!.uuid } }, body: { name } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.space(space) })
      rename.reset()
      onClose()
    },
    onError: (err) => setErrors(err instanceof ApiFailure ? fieldErrors(err, STORY_FIELD_ERRORS) : {}),
  })
  return (
    <Dialog open={target !== null} title={t('stories.renameTitle', { name: target?.name ?? '' })} onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          setErrors({})
          rename.mutate(String(new FormData(e.currentTarget).get('name')))
        }}
        className="flex flex-col gap-3"
        noValidate
      >
        <TextField label={t('stories.newName')} name="name" defaultValue={target?.name} required autoFocus errors={errors.name} />
        <ErrorNotice error={rename.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button tone="primary" type="submit" disabled={rename.isPending}>
            {t('stories.rename')}
          </Button>
        </div>
      </form>
    </Dialog>
  )
}

