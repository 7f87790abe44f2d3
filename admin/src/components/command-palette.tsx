import { useQuery } from '@tanstack/react-query'
import { useNavigate, useParams, useRouterState } from '@tanstack/react-router'
import { type KeyboardEvent, useEffect, useId, useMemo, useState } from 'react'
import { spacesQuery, storySearchQuery } from '../api/queries'
import { atLeast, minRoleOf, useSpaceRole } from '../api/roles'
import { t } from '../i18n'
import { Dialog } from './ui'
import { visibleEntries } from './sidebar'

/**
 * Commands the current screen offers the palette: a screen sends them with `offerCommand` and listens for
 * `admin:command` events (the Story editor's "Publish this Story"). Screen-independent actions (New Story) go
 * through the router's search.
 */
export const COMMAND_EVENT = 'admin:command'
export type ScreenCommand = 'publish'
export function runScreenCommand(command: ScreenCommand) {
  window.dispatchEvent(new CustomEvent(COMMAND_EVENT, { detail: command }))
}
/** A screen listens for the palette's commands while it is mounted. */
export function useScreenCommand(handler: (command: ScreenCommand) => void) {
  useEffect(() => {
    const listener = (e: Event) => handler((e as CustomEvent<ScreenCommand>).detail)
    window.addEventListener(COMMAND_EVENT, listener)
    return () => window.removeEventListener(COMMAND_EVENT, listener)
  }, [handler])
}

interface Item {
  id: string
  group: 'go' | 'stories' | 'actions'
  label: string
  hint?: string
  keywords?: string
  run: () => void
}

/** Whether a key press happens while the person types (the `?` shortcut stays out of their way). */
function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null
  if (!el || !el.tagName) return false
  return el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)
}

/** Ctrl/⌘+K opens the command palette; `?` the list of shortcuts. Mounted once by the shell. */
export function useGlobalShortcuts(open: { palette: () => void; help: () => void }) {
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      // Taken already (the rich-text editor's Ctrl+K makes a link).
      if (e.defaultPrevented) return
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'k') {
        e.preventDefault()
        open.palette()
      } else if (e.key === '?' && !e.ctrlKey && !e.metaKey && !e.altKey && !typing(e.target) && !document.querySelector('dialog[open]')) {
        e.preventDefault()
        open.help()
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [open])
}

function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value)
  useEffect(() => {
    const id = setTimeout(() => setV(value), ms)
    return () => clearTimeout(id)
  }, [value, ms])
  return v
}

/** The palette: go to any screen, find a Story by name (the API's search), run an action. */
export function CommandPalette({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <Dialog open={open} title={t('palette.title')} onClose={onClose}>
      <PaletteBody onClose={onClose} />
    </Dialog>
  )
}

function PaletteBody({ onClose }: { onClose: () => void }) {
  const navigate = useNavigate()
  const params = useParams({ strict: false }) as { space?: string; uuid?: string }
  const pathname = useRouterState({ select: (s) => s.location.pathname })
  const space = params.space
  const role = useSpaceRole(space ?? '')
  const spaces = useQuery(spacesQuery())
  const [query, setQuery] = useState('')
  const [active, setActive] = useState(0)
  const id = useId()
  const q = useDebounced(query.trim(), 200)
  const stories = useQuery({ ...storySearchQuery(space ?? '', q), enabled: !!space && q.length >= 2 })

  const go = (fn: () => unknown) => () => {
    onClose()
    void fn()
  }
  const items = useMemo<Item[]>(() => {
    const list: Item[] = []
    if (space) {
      for (const e of visibleEntries(role))
        list.push({
          id: `go-${e.id}`,
          group: 'go',
          label: t(e.label),
          keywords: e.keywords,
          run: go(() => navigate({ to: `/spaces/$space${e.to}` as '/spaces/$space', params: { space }, search: e.to === '' ? {} : undefined })),
        })
    }
    list.push({ id: 'go-spaces', group: 'go', label: t('nav.spaces'), run: go(() => navigate({ to: '/' })) })
    list.push({ id: 'go-account', group: 'go', label: t('nav.account'), keywords: 'profile password language', run: go(() => navigate({ to: '/account' })) })
    for (const s of spaces.data ?? []) {
      if (s.archived || s.slug === space) continue
      list.push({
        id: `space-${s.slug}`,
        group: 'go',
        label: t('palette.openSpace', { name: s.name }),
        run: go(() => navigate({ to: '/spaces/$space', params: { space: s.slug }, search: {} })),
      })
    }
    if (space && atLeast(role, minRoleOf('POST', '/v1/spaces/{space}/stories') ?? 'editor')) {
      list.push({
        id: 'new-story',
        group: 'actions',
        label: t('palette.newStory'),
        keywords: 'create add',
        run: go(() => navigate({ to: '/spaces/$space', params: { space }, search: { new: 'story' } })),
      })
      list.push({
        id: 'new-folder',
        group: 'actions',
        label: t('palette.newFolder'),
        keywords: 'create add',
        run: go(() => navigate({ to: '/spaces/$space', params: { space }, search: { new: 'folder' } })),
      })
      if (params.uuid && /\/stories\//.test(pathname) && atLeast(role, minRoleOf('POST', '/v1/spaces/{space}/stories/{uuid}/publish') ?? 'editor'))
        list.push({ id: 'publish', group: 'actions', label: t('palette.publish'), keywords: 'release live', run: go(() => runScreenCommand('publish')) })
    }
    list.push({ id: 'help', group: 'actions', label: t('shortcuts.title'), keywords: 'keyboard keys help ?', run: go(() => window.dispatchEvent(new Event('admin:help'))) })
    const needle = query.trim().toLowerCase()
    const matching = needle ? list.filter((i) => `${i.label} ${i.keywords ?? ''}`.toLowerCase().includes(needle)) : list
    const found: Item[] =
      space && q.length >= 2
        ? (stories.data?.data ?? []).slice(0, 8).map((s) => ({
            id: `story-${s.uuid}`,
            group: 'stories' as const,
            label: s.name,
            hint: s.full_path,
            run: go(() => navigate({ to: '/spaces/$space/stories/$uuid', params: { space, uuid: s.uuid }, search: {} })),
          }))
        : []
    return [...matching, ...found]
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [space, role, spaces.data, query, q, stories.data, params.uuid, pathname])

  useEffect(() => setActive(0), [query])
  const current = items[Math.min(active, items.length - 1)]
  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown') {
      e.preventDefault()
      setActive((a) => (items.length ? (a + 1) % items.length : 0))
    } else if (e.key === 'ArrowUp') {
      e.preventDefault()
      setActive((a) => (items.length ? (a - 1 + items.length) % items.length : 0))
    } else if (e.key === 'Enter') {
      e.preventDefault()
      current?.run()
    }
  }
  useEffect(() => {
    if (current) document.getElementById(`${id}-${current.id}`)?.scrollIntoView({ block: 'nearest' })
  }, [current, id])
  const GROUPS = { go: t('palette.group.go'), stories: t('palette.group.stories'), actions: t('palette.group.actions') }
  return (
    <div className="flex flex-col gap-3">
      <input
        autoFocus
        role="combobox"
        aria-expanded="true"
        aria-controls={`${id}-list`}
        aria-activedescendant={current ? `${id}-${current.id}` : undefined}
        aria-autocomplete="list"
        aria-label={t('palette.search')}
        placeholder={t('palette.placeholder')}
        value={query}
        onChange={(e) => setQuery(e.target.value)}
        onKeyDown={onKeyDown}
        className="rounded-md border border-slate-300 bg-white px-3 py-2 text-sm"
      />
      <ul id={`${id}-list`} role="listbox" aria-label={t('palette.results')} className="flex max-h-80 flex-col gap-0.5 overflow-y-auto">
        {items.map((item, i) => (
          <li
            key={item.id}
            id={`${id}-${item.id}`}
            role="option"
            aria-selected={item === current}
            onMouseEnter={() => setActive(i)}
            onClick={() => item.run()}
            className="flex cursor-pointer items-baseline justify-between gap-3 rounded-md px-3 py-1.5 text-sm text-slate-900 aria-selected:bg-indigo-50 aria-selected:text-indigo-900"
          >
            <span>{item.label}</span>
            <span className="text-xs text-slate-600">{item.hint ?? GROUPS[item.group]}</span>
          </li>
        ))}
      </ul>
      {space && q.length >= 2 && stories.isFetching ? (
        <p className="text-xs text-slate-600" aria-live="polite">
          {t('palette.searching')}
        </p>
      ) : null}
      {!items.length && !stories.isFetching ? <p className="text-sm text-slate-700">{t('palette.nothing')}</p> : null}
    </div>
  )
}

/** The keyboard shortcuts, opened with `?`. */
export function ShortcutsDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const rows: [string, string][] = [
    [t('shortcuts.key.palette'), t('shortcuts.palette')],
    ['?', t('shortcuts.help')],
    [t('shortcuts.key.escape'), t('shortcuts.close')],
    [t('shortcuts.key.arrows'), t('shortcuts.arrows')],
    [t('shortcuts.key.reorder'), t('shortcuts.reorder')],
    [t('shortcuts.key.save'), t('shortcuts.save')],
  ]
  return (
    <Dialog open={open} title={t('shortcuts.title')} onClose={onClose}>
      <table className="text-sm">
        <thead>
          <tr>
            <th scope="col" className="pb-1 pr-4 text-left font-semibold">
              {t('shortcuts.keys')}
            </th>
            <th scope="col" className="pb-1 text-left font-semibold">
              {t('shortcuts.does')}
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([keys, does]) => (
            <tr key={keys}>
              <td className="py-1 pr-4">
                <kbd className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-900 ring-1 ring-slate-300">{keys}</kbd>
              </td>
              <td className="py-1 text-slate-800">{does}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="flex justify-end">
        <button type="button" onClick={onClose} className="rounded-md px-3 py-1.5 text-sm font-medium ring-1 ring-slate-300 hover:bg-slate-100">
          {t('common.close')}
        </button>
      </div>
    </Dialog>
  )
}
