import { type KeyboardEvent, type PointerEvent, type ReactNode, useLayoutEffect, useRef, useState } from 'react'
import { formatNumber } from '../i18n'
import { announce, Announcer } from './announcer'
import { Button } from './ui'

/** A priority list's words, from the feature's catalog (positions come formatted for the locale). */
export type PriorityListText<T> = {
  /** The list's accessible name. */
  list: string
  /** Above the list, to those who may reorder it: how to. */
  help: string
  /** The drag handle's name. */
  handle: (item: T, position: string) => string
  up: (item: T) => string
  down: (item: T) => string
  /** Announced in the live region after a move. */
  moved: (item: T, position: string, total: string) => string
}

/** Saves an order as priorities 10, 20, 30, …, one item after another, only those whose priority changes. */
export async function savePriorities<T extends { priority: number }>(items: readonly T[], save: (item: T, priority: number) => Promise<unknown>) {
  for (const [i, x] of items.entries()) if (x.priority !== (i + 1) * 10) await save(x, (i + 1) * 10)
}

type Key = string | number

/** `items` in the order of `keys`; an item the keys do not name yet (created meanwhile) comes last. */
function inOrder<T>(items: readonly T[], itemKey: (item: T) => Key, keys: readonly Key[] | null): T[] {
  if (!keys) return items.slice()
  const byKey = new Map(items.map((x) => [itemKey(x), x]))
  const ordered = keys.map((k) => byKey.get(k)).filter((x) => x !== undefined) as T[]
  const named = new Set(keys)
  return [...ordered, ...items.filter((x) => !named.has(itemKey(x)))]
}

/**
 * Items in the order they apply, reordered (when `canReorder`) by dragging the handle, with Alt+↑/↓ on it (the focus
 * follows the moved item's handle) or with the ↑/↓ buttons the row places where it wants them (`moveButtons`); each
 * move is announced in a polite live region. While `onReorder` saves the new order, the list shows it (and is
 * aria-busy). A move made meanwhile is made on the order shown and saved when the running save has ended (only the
 * latest order: one save after the running one, however many moves), never from the order before the first save.
 */
export function PriorityList<T>({
  items,
  itemKey,
  canReorder,
  onReorder,
  text,
  testId,
  rowProps,
  children,
}: {
  items: readonly T[]
  itemKey: (item: T) => Key
  canReorder: boolean
  /**
   * Saves the new order; the list shows it until the promise settles (it should not reject: report failures in the
   * screen). A move made during a save is saved by a second call after it: the items it gets may still carry what
   * they had before the first save (such as their priorities), so compare with the freshest data, not with them.
   */
  onReorder: (next: T[]) => Promise<unknown>
  text: PriorityListText<T>
  testId?: string
  /** Attributes of an item's row, such as `data-` names for tests. */
  rowProps?: (item: T) => Record<`data-${string}`, string>
  /** A row's content after its handle and position. */
  children: (item: T, row: { index: number; moveButtons: ReactNode }) => ReactNode
}) {
  const [order, setOrder] = useState<Key[] | null>(null) // keys while a move is being saved or waits to be
  const [drag, setDrag] = useState<{ from: number; to: number } | null>(null)
  const listRef = useRef<HTMLOListElement>(null)
  const shown = inOrder(items, itemKey, order)

  // What the moves and the saves read, up to date between renders: two moves can come before the list shows the first.
  const latest = useRef({ items, itemKey, onReorder })
  useLayoutEffect(() => {
    latest.current = { items, itemKey, onReorder }
  })
  const orderRef = useRef<Key[] | null>(null) // the order shown, set with each move (the state follows at the render)
  const saving = useRef(false)
  const pending = useRef(false) // a move was made while the running save ran
  const focusKey = useRef<Key | null>(null) // the item whose handle keeps the focus (moved with Alt+↑/↓)

  /** Saves the order shown, then again as long as moves were made meanwhile; the list is busy until the last ends. */
  async function saveAll() {
    saving.current = true
    try {
      do {
        pending.current = false
        const { items, itemKey, onReorder } = latest.current
        await onReorder(inOrder(items, itemKey, orderRef.current))
      } while (pending.current)
    } finally {
      saving.current = false
      pending.current = false
      orderRef.current = null
      setOrder(null)
    }
  }
  /** Moves an item by `by` places in the order shown (the latest, even while a save runs). */
  function move(key: Key, by: number) {
    const { items, itemKey } = latest.current
    const next = inOrder(items, itemKey, orderRef.current)
    const from = next.findIndex((x) => itemKey(x) === key)
    const to = from + by
    if (from < 0 || to < 0 || to >= next.length || from === to) return
    const [item] = next.splice(from, 1)
    next.splice(to, 0, item!)
    orderRef.current = next.map(itemKey)
    setOrder(orderRef.current)
    announce(text.moved(item!, formatNumber(to + 1), formatNumber(next.length)))
    if (saving.current) pending.current = true
    else void saveAll()
  }
  function onHandleKey(e: KeyboardEvent, item: T) {
    if (!e.altKey || (e.key !== 'ArrowUp' && e.key !== 'ArrowDown')) return
    e.preventDefault()
    focusKey.current = itemKey(item)
    move(itemKey(item), e.key === 'ArrowUp' ? -1 : 1)
  }
  // The moved handle keeps the focus: a row the list moves in the document loses it (to the body), so it gets it back
  // whenever the order shown changes (a move, the list as saved); not when the focus went elsewhere.
  const shownKeys = JSON.stringify(shown.map(itemKey))
  useLayoutEffect(() => {
    const key = focusKey.current
    if (key === null) return
    const active = document.activeElement
    if (active && active !== document.body) return
    const i = shown.findIndex((x) => itemKey(x) === key)
    if (i >= 0) listRef.current?.querySelectorAll<HTMLElement>('[data-handle]')[i]?.focus()
  }, [shownKeys])
  function slotAt(clientY: number): number {
    const rows = [...(listRef.current?.querySelectorAll<HTMLElement>('[data-priority-row]') ?? [])]
    const i = rows.findIndex((r) => clientY < r.getBoundingClientRect().top + r.getBoundingClientRect().height / 2)
    return i < 0 ? rows.length - 1 : i
  }
  const onPointerDown = (e: PointerEvent, i: number) => {
    if (e.button !== 0) return
    ;(e.target as HTMLElement).setPointerCapture(e.pointerId)
    setDrag({ from: i, to: i })
  }
  const onPointerMove = (e: PointerEvent) => drag && setDrag({ ...drag, to: slotAt(e.clientY) })
  const onPointerUp = () => {
    if (!drag) return
    const d = drag
    setDrag(null)
    focusKey.current = null
    const item = shown[d.from]
    if (item !== undefined) move(itemKey(item), d.to - d.from)
  }
  const byButton = (item: T, by: number) => {
    focusKey.current = null
    move(itemKey(item), by)
  }

  return (
    <>
      <Announcer />
      {canReorder ? <p className="text-sm text-slate-700">{text.help}</p> : null}
      <ol ref={listRef} className="flex flex-col gap-2" aria-label={text.list} aria-busy={order ? true : undefined} data-testid={testId}>
        {shown.map((item, i) => (
          <li
            key={itemKey(item)}
            data-priority-row
            {...rowProps?.(item)}
            className={`flex flex-wrap items-center gap-3 rounded-lg bg-white p-3 ring-1 ${drag && drag.to === i && drag.from !== i ? 'ring-2 ring-indigo-600' : 'ring-slate-200'}`}
          >
            {canReorder ? (
              <button
                type="button"
                data-handle
                className="cursor-grab touch-none rounded px-1 text-slate-700 ring-1 ring-slate-300"
                aria-label={text.handle(item, formatNumber(i + 1))}
                aria-keyshortcuts="Alt+ArrowUp Alt+ArrowDown"
                onKeyDown={(e) => onHandleKey(e, item)}
                onPointerDown={(e) => onPointerDown(e, i)}
                onPointerMove={onPointerMove}
                onPointerUp={onPointerUp}
                onPointerCancel={() => setDrag(null)}
              >
                <span aria-hidden="true">⠿</span>
              </button>
            ) : null}
            <span className="w-8 text-sm text-slate-600">{formatNumber(i + 1)}.</span>
            {children(item, {
              index: i,
              moveButtons: canReorder ? (
                <>
                  <Button onClick={() => byButton(item, -1)} disabled={i === 0} aria-label={text.up(item)}>
                    ↑
                  </Button>
                  <Button onClick={() => byButton(item, 1)} disabled={i === shown.length - 1} aria-label={text.down(item)}>
                    ↓
                  </Button>
                </>
              ) : null,
            })}
          </li>
        ))}
      </ol>
    </>
  )
}
