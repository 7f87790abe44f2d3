import { createContext, memo, type ReactNode, useContext, useId, useMemo, useRef, useState } from 'react'
import { editorFor } from '../fields'
import { fieldHelp, fieldLabel } from '../fields/labels'
import { type Block, type Blueprint, type FieldDef, newUid } from '../fields/types'
import { announce } from './announcer'
import { t } from '../i18n'
import { Button, FieldErrors } from './ui'

interface ListProps {
  /** The error path of this list (`blocks`, `blocks/0/body`). */
  path: string
  blocks: Block[]
  onChange: (blocks: Block[]) => void
  /** The blueprints that may be added here. */
  allowed: Blueprint[]
  blueprints: Map<string, Blueprint>
  errors: Record<string, string[]>
}

/** Set while a translation is edited: fields with `translatable: false` then show the Story's own-locale value. */
export const TranslationContext = createContext<null | { lang: string; primary: string }>(null)

/**
 * Set while a locale without a translation is shown: the values come from `from`, the first locale of `lang`'s
 * fallback chain that has one. Every field with a value says so.
 */
export const FallbackContext = createContext<null | { lang: string; from: string }>(null)

/** Another editor on this Story (a presence session). */
export interface Person {
  sessionId: string
  userId: number
  name: string
}

/** What the collaboration layer shows on blocks. Its value changes only when presence or comments change. */
export interface CollabView {
  /** Other editors by the path of the block they have focused (`blocks/0/body/1`). */
  presence: Map<string, Person[]>
  /** Comments (open threads and their replies) by the `_uid` of the block they are anchored to. */
  comments: Map<string, number>
  /** Show the comments of a block (its uid, its path in the editor, its title). */
  openComments: (uid: string, path: string, title: string) => void
}
export const CollabContext = createContext<CollabView | null>(null)

/** The field types that offer AI actions (features/ai/field-ai.tsx). */
export const AI_FIELD_TYPES = new Set(['text', 'textarea', 'richtext'])

/**
 * Set by the Story editor when AI is on for the Space and the caller may use it: draws a field's AI actions under its
 * label (text, textarea and richtext fields that are edited here, not a shared field of a translation).
 */
export const FieldAiContext = createContext<null | ((field: { label: string; def: FieldDef; value: unknown; onChange: (v: unknown) => void }) => ReactNode)>(null)

export const initials = (name: string) =>
  name
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((w) => w[0]?.toUpperCase() ?? '')
    .join('') || '?'

const AVATAR_COLOURS = ['bg-fuchsia-700', 'bg-teal-700', 'bg-orange-700', 'bg-sky-700', 'bg-rose-700', 'bg-violet-700', 'bg-lime-800', 'bg-cyan-800']
export const avatarColour = (userId: number) => AVATAR_COLOURS[Math.abs(userId) % AVATAR_COLOURS.length]

/** Initials in a coloured circle; the full name for assistive technology and as a tooltip. */
export function Avatar({ person, size = 'md' }: { person: Person; size?: 'sm' | 'md' }) {
  return (
    <span
      role="img"
      aria-label={person.name}
      title={person.name}
      data-presence-user={person.userId}
      className={`inline-flex items-center justify-center rounded-full font-semibold text-white ${avatarColour(person.userId)} ${size === 'sm' ? 'h-5 w-5 text-[10px]' : 'h-7 w-7 text-xs'}`}
    >
      {initials(person.name)}
    </span>
  )
}

/** A speech bubble (an inline SVG: no emoji font needed). */
export function CommentIcon() {
  return (
    <svg aria-hidden="true" viewBox="0 0 16 16" className="inline h-3.5 w-3.5 align-[-2px]" fill="none" stroke="currentColor" strokeWidth="1.5">
      <path d="M2.5 3.5h11v7h-6l-3 2.5v-2.5h-2z" strokeLinejoin="round" />
    </svg>
  )
}

/** A deep copy of a block with a new `_uid` for it and for every block nested in it. */
export function duplicateBlock(block: Block): Block {
  const copy = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(copy)
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {}
      for (const [k, x] of Object.entries(v)) out[k] = copy(x)
      if (typeof out.component === 'string' && typeof out._uid === 'string') out._uid = newUid()
      return out
    }
    return v
  }
  return copy(block) as Block
}

/** Focus the reorder handle of the block `uid` once React has moved it. */
function focusHandle(uid: string) {
  requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-block-handle="${CSS.escape(uid)}"]`)?.focus())
}

/** What a block row can ask of its list; one stable object per list, so rows that did not change skip rendering. */
interface ListActions {
  change(index: number, block: Block): void
  remove(index: number, title: string): void
  move(from: number, to: number, title: string): void
  duplicate(index: number, title: string): void
  /** Pointer drag of a block's handle: the row calls these with the pointer's position. */
  dragStart(index: number): void
  dragMove(clientY: number): void
  dragEnd(commit: boolean, title: string): void
}

/**
 * A list of blocks: each block's form from its blueprint; add, remove, duplicate, reorder (drag the handle, the
 * arrow buttons, or Alt+↑/↓ on the handle; every move is announced).
 */
export function BlockList({ path, blocks, onChange, allowed, blueprints, errors }: ListProps) {
  const [adding, setAdding] = useState(allowed[0]?.name ?? '')
  const selectId = useId()
  const listRef = useRef<HTMLOListElement>(null)
  const latest = useRef({ blocks, onChange })
  latest.current = { blocks, onChange }
  // Pointer drag: the block picked up, and where it would land (an insertion index, 0..n).
  const [drag, setDrag] = useState<{ from: number; to: number } | null>(null)
  const dragRef = useRef(drag) // the same, for the pointer handlers (set with the state, read before it renders)

  const actions = useMemo<ListActions>(() => {
    const move = (from: number, to: number, title: string) => {
      const { blocks, onChange } = latest.current
      if (to < 0 || to >= blocks.length || from === to) return
      const next = blocks.slice()
      const [b] = next.splice(from, 1)
      next.splice(to, 0, b)
      onChange(next)
      focusHandle(b._uid)
      announce(t('blocks.moved', { title, position: to + 1, count: blocks.length }))
    }
    return {
      change(index, block) {
        const { blocks, onChange } = latest.current
        onChange(blocks.map((x, j) => (j === index ? block : x)))
      },
      remove(index, title) {
        const { blocks, onChange } = latest.current
        onChange(blocks.filter((_, j) => j !== index))
        announce(t('blocks.removed', { title }))
      },
      move,
      duplicate(index, title) {
        const { blocks, onChange } = latest.current
        const copy = duplicateBlock(blocks[index])
        const next = blocks.slice()
        next.splice(index + 1, 0, copy)
        onChange(next)
        focusHandle(copy._uid)
        announce(t('blocks.duplicated', { title, position: index + 2, count: next.length }))
      },
      dragStart(index) {
        dragRef.current = { from: index, to: index }
        setDrag(dragRef.current)
      },
      dragMove(clientY) {
        const list = listRef.current
        const d = dragRef.current
        if (!list || !d) return
        // The insertion point: before the first row whose middle is below the pointer.
        const rows = [...list.children] as HTMLElement[]
        let to = rows.length
        for (let i = 0; i < rows.length; i++) {
          const r = rows[i].getBoundingClientRect()
          if (clientY < r.top + r.height / 2) {
            to = i
            break
          }
        }
        if (to !== d.to) {
          dragRef.current = { from: d.from, to }
          setDrag(dragRef.current)
        }
      },
      dragEnd(commit, title) {
        const d = dragRef.current
        dragRef.current = null
        setDrag(null)
        if (!commit || !d) return
        const to = d.to > d.from ? d.to - 1 : d.to
        move(d.from, to, title)
      },
    }
  }, [])

  const add = () => {
    const name = adding || allowed[0]?.name
    if (!name) return
    onChange([...blocks, { component: name, _uid: newUid() }])
  }
  return (
    <div className="flex flex-col gap-3">
      <FieldErrors errors={errors[path]} />
      {blocks.length === 0 ? <p className="text-sm text-slate-600">{t('blocks.none')}</p> : null}
      <ol ref={listRef} className="flex flex-col gap-3" aria-label={t('blocks.list')}>
        {blocks.map((block, i) => (
          <BlockItem
            key={block._uid}
            path={`${path}/${i}`}
            block={block}
            index={i}
            count={blocks.length}
            blueprints={blueprints}
            errors={errors}
            actions={actions}
            dragging={drag?.from === i}
            dropMark={drag && drag.to !== drag.from && drag.to !== drag.from + 1 ? (drag.to === i ? 'before' : drag.to === blocks.length && i === blocks.length - 1 ? 'after' : null) : null}
          />
        ))}
      </ol>
      {allowed.length ? (
        <div className="flex items-center gap-2">
          <label htmlFor={selectId} className="text-sm">
            {t('blocks.addBlock')}
          </label>
          <select id={selectId} value={adding} onChange={(e) => setAdding(e.target.value)} className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm">
            {allowed.map((b) => (
              <option key={b.name} value={b.name}>
                {b.display_name}
              </option>
            ))}
          </select>
          <Button onClick={add}>{t('blocks.add')}</Button>
        </div>
      ) : (
        <p className="text-sm text-slate-600">{t('blocks.noneAllowed')}</p>
      )}
    </div>
  )
}

interface ItemProps {
  path: string
  block: Block
  index: number
  count: number
  blueprints: Map<string, Blueprint>
  errors: Record<string, string[]>
  actions: ListActions
  dragging: boolean
  dropMark: 'before' | 'after' | null
}

const DRAG_THRESHOLD_PX = 4

const BlockItem = memo(function BlockItem({ path, block, index, count, blueprints, errors, actions, dragging, dropMark }: ItemProps) {
  const bp = blueprints.get(block.component)
  const title = bp?.display_name ?? block.component
  const collab = useContext(CollabContext)
  const here = collab?.presence.get(path)
  const comments = collab?.comments.get(block._uid) ?? 0
  const pointer = useRef<{ id: number; y: number; started: boolean } | null>(null)
  // The drop line is drawn inside the row: content-visibility clips what a row paints outside itself.
  const mark =
    dropMark === 'before'
      ? 'before:absolute before:top-0 before:inset-x-0 before:z-10 before:h-1 before:rounded-t-lg before:bg-indigo-600'
      : dropMark === 'after'
        ? 'after:absolute after:bottom-0 after:inset-x-0 after:z-10 after:h-1 after:rounded-b-lg after:bg-indigo-600'
        : ''
  return (
    <li
      // Rows off screen skip layout and paint (content-visibility), remembering their last size: a long Story stays light.
      className={`relative rounded-lg border bg-white [contain-intrinsic-size:auto_10rem] [content-visibility:auto] ${here?.length ? 'border-fuchsia-600 ring-2 ring-fuchsia-600' : 'border-slate-200'} ${dragging ? 'opacity-60' : ''} ${mark}`}
      data-block-uid={block._uid}
      data-block-path={path}
      data-drop={dropMark ?? undefined}
    >
      <div className="flex flex-wrap items-center gap-2 border-b border-slate-100 bg-slate-50 px-3 py-1.5">
        <button
          type="button"
          data-block-handle={block._uid}
          aria-label={t('blocks.handle', { title, position: index + 1, count })}
          onKeyDown={(e) => {
            if (!e.altKey) return
            if (e.key === 'ArrowUp') {
              e.preventDefault()
              actions.move(index, index - 1, title)
            } else if (e.key === 'ArrowDown') {
              e.preventDefault()
              actions.move(index, index + 1, title)
            }
          }}
          onPointerDown={(e) => {
            if (e.button !== 0) return
            pointer.current = { id: e.pointerId, y: e.clientY, started: false }
            e.currentTarget.setPointerCapture(e.pointerId)
          }}
          onPointerMove={(e) => {
            const p = pointer.current
            if (!p || p.id !== e.pointerId) return
            if (!p.started) {
              if (Math.abs(e.clientY - p.y) < DRAG_THRESHOLD_PX) return
              p.started = true
              actions.dragStart(index)
            }
            actions.dragMove(e.clientY)
          }}
          onPointerUp={(e) => {
            const p = pointer.current
            pointer.current = null
            if (p?.started) actions.dragEnd(true, title)
            if (e.currentTarget.hasPointerCapture(e.pointerId)) e.currentTarget.releasePointerCapture(e.pointerId)
          }}
          onPointerCancel={() => {
            if (pointer.current?.started) actions.dragEnd(false, title)
            pointer.current = null
          }}
          className="cursor-grab touch-none rounded px-1 text-slate-600 active:cursor-grabbing"
        >
          ⠿
        </button>
        <span className="flex-1 text-sm font-semibold">{title}</span>
        {here?.length ? (
          <span className="flex items-center gap-1" data-testid="block-presence">
            <span className="sr-only">{t('blocks.hereNow')}</span>
            {here.map((p) => (
              <Avatar key={p.sessionId} person={p} size="sm" />
            ))}
          </span>
        ) : null}
        {collab ? (
          <Button className="px-2 py-0.5 text-xs" onClick={() => collab.openComments(block._uid, path, title)} data-comment-count={comments}>
            <CommentIcon /> {comments}
            <span className="sr-only">
              {' '}
              {t(comments === 1 ? 'blocks.commentOn' : 'blocks.commentsOn', { title })}
            </span>
          </Button>
        ) : null}
        <Button className="px-2 py-0.5 text-xs" disabled={index === 0} onClick={() => actions.move(index, index - 1, title)} aria-label={t('blocks.up', { title })}>
          ↑
        </Button>
        <Button className="px-2 py-0.5 text-xs" disabled={index === count - 1} onClick={() => actions.move(index, index + 1, title)} aria-label={t('blocks.down', { title })}>
          ↓
        </Button>
        <Button className="px-2 py-0.5 text-xs" onClick={() => actions.duplicate(index, title)} aria-label={t('blocks.duplicateOf', { title })}>
          {t('blocks.duplicate')}
        </Button>
        <Button className="px-2 py-0.5 text-xs" onClick={() => actions.remove(index, title)} aria-label={t('blocks.removeOf', { title })}>
          {t('blocks.remove')}
        </Button>
      </div>
      <div className="flex flex-col gap-3 p-3">
        <FieldErrors errors={errors[path] ?? errors[`${path}/component`]} />
        {bp ? (
          Object.entries(bp.schema).map(([name, def]) => (
            <FieldRow
              key={name}
              path={`${path}/${name}`}
              name={name}
              def={def}
              value={block[name]}
              onChange={(v) => {
                const next = { ...block }
                if (v === undefined) delete next[name]
                else next[name] = v
                actions.change(index, next)
              }}
              blueprints={blueprints}
              errors={errors}
            />
          ))
        ) : (
          <p className="text-sm text-amber-800">{t('blocks.unknown', { component: block.component })}</p>
        )}
      </div>
    </li>
  )
})

/** A label, the field's editor from the table, and the API's messages for its path. */
export function FieldRow(props: {
  path: string
  name: string
  def: FieldDef
  value: unknown
  onChange: (v: unknown) => void
  blueprints: Map<string, Blueprint>
  errors: Record<string, string[]>
}) {
  const id = useId()
  const translation = useContext(TranslationContext)
  const fallback = useContext(FallbackContext)
  const ai = useContext(FieldAiContext)
  const shared = translation !== null && props.def.translatable === false
  // A blocks field's nested paths belong to its blocks; any other field also owns its sub-paths (`link/url`).
  const own =
    props.def.type === 'blocks'
      ? props.errors[props.path]
      : Object.entries(props.errors)
          .filter(([k]) => k === props.path || k.startsWith(`${props.path}/`))
          .flatMap(([, m]) => m)
  const Editor = editorFor(props.def.type)
  // The value shown comes from another locale: a shared field (the own locale), or a missing translation.
  const fallsBack = !shared && fallback !== null && props.value !== undefined && props.def.type !== 'blocks'
  const hintId = shared || fallsBack ? `${id}-hint` : undefined
  // The blueprint's label and help in the UI's language (blueprint-defined text); the key only when it has none.
  const help = fieldHelp(props.def)
  const helpId = help ? `${id}-help` : undefined
  const describedBy = [own?.length ? `${id}-err` : '', helpId ?? '', hintId ?? ''].filter(Boolean).join(' ') || undefined
  const label = (
    <>
      {fieldLabel(props.def, props.name)}
      {props.def.required ? (
        <span className="text-red-700" title={t('field.required')}>
          {' *'}
        </span>
      ) : null}
    </>
  )
  return (
    <div className="flex flex-col gap-1" data-field-path={props.path}>
      {props.def.type === 'blocks' ? (
        <span className="text-sm font-medium">{label}</span>
      ) : (
        <label htmlFor={id} className="text-sm font-medium">
          {label}
        </label>
      )}
      {ai && !shared && AI_FIELD_TYPES.has(props.def.type) ? ai({ label: fieldLabel(props.def, props.name), def: props.def, value: props.value, onChange: props.onChange }) : null}
      {help ? (
        <p id={helpId} className="text-xs text-slate-600" data-testid="field-help">
          {help}
        </p>
      ) : null}
      {shared ? (
        <p id={hintId} className="text-xs text-slate-600" data-fallback-from={translation.primary}>
          {t('blocks.notTranslated', { primary: translation.primary })}
        </p>
      ) : null}
      {fallsBack ? (
        <p id={hintId} className="text-xs text-amber-900" data-fallback-from={fallback.from}>
          <span className="rounded bg-amber-100 px-1 font-medium">{t('blocks.from', { from: fallback.from })}</span>{' '}
          {t('blocks.fallback', { lang: fallback.lang, from: fallback.from })}
        </p>
      ) : null}
      <fieldset disabled={shared} className="contents">
        <Editor
          id={id}
          path={props.path}
          name={props.name}
          def={props.def}
          value={props.value as never}
          onChange={props.onChange as never}
          describedBy={describedBy}
          invalid={!!own?.length}
          blueprints={props.blueprints}
          errors={props.errors}
        />
      </fieldset>
      {props.def.type === 'blocks' ? null : <FieldErrors id={`${id}-err`} errors={own} />}
    </div>
  )
}
