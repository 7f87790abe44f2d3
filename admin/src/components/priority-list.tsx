import { type KeyboardEvent, type PointerEvent, type ReactNode, useRef, useState } from 'react'
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

/**
 * Items in the order they apply, reordered (when `canReorder`) by dragging the handle, with Alt+↑/↓ on it (the focus
 * follows the moved item's handle) or with the ↑/↓ buttons the row places where it wants them (`moveButtons`); each
 * move is announced in a polite live region. While `onReorder` saves the new order, the list shows it (and is
 * aria-busy).
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
  itemKey: (item: T) => string | number
  canReorder: boolean
  /** The new order; the list shows it until the promise settles (it should not reject: report failures in the screen). */
  onReorder: (next: T[]) => Promise<unknown>
  text: PriorityListText<T>
  testId?: string
  /** Attributes of an item's row, such as `data-` names for tests. */
  rowProps?: (item: T) => Record<`data-${string}`, string>
  /** A row's content after its handle and position. */
  children: (item: T, row: { index: number; moveButtons: ReactNode }) => ReactNode
}) {
  const [order, setOrder] = useState<(string | number)[] | null>(null) // keys while a move is being saved
  const [drag, setDrag] = useState<{ from: number; to: number } | null>(null)
  const listRef = useRef<HTMLOListElement>(null)
  const shown = order ? (order.map((k) => items.find((x) => itemKey(x) === k)).filter((x) => x !== undefined) as T[]) : items

  async function move(from: number, to: number) {
    if (to < 0 || to >= shown.length || from === to) return
    const next = shown.slice()
    const [item] = next.splice(from, 1)
    next.splice(to, 0, item!)
    setOrder(next.map(itemKey))
    announce(text.moved(item!, formatNumber(to + 1), formatNumber(next.length)))
    try {
      await onReorder(next)
    } finally {
      setOrder(null)
    }
  }
  function onHandleKey(e: KeyboardEvent, i: number) {
    if (!e.altKey || (e.key !== 'ArrowUp' && e.key !== 'ArrowDown')) return
    e.preventDefault()
    const to = e.key === 'ArrowUp' ? i - 1 : i + 1
    void move(i, to).then(() => requestAnimationFrame(() => (listRef.current?.querySelectorAll<HTMLElement>('[data-handle]')[to] ?? null)?.focus()))
  }
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
    void move(d.from, d.to)
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
                onKeyDown={(e) => onHandleKey(e, i)}
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
                  <Button onClick={() => void move(i, i - 1)} disabled={i === 0} aria-label={text.up(item)}>
                    ↑
                  </Button>
                  <Button onClick={() => void move(i, i + 1)} disabled={i === shown.length - 1} aria-label={text.down(item)}>
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
