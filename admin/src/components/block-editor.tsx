import { createContext, memo, useContext, useId, useState } from 'react'
import { editorFor } from '../fields'
import { type Block, type Blueprint, type FieldDef, newUid } from '../fields/types'
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

/** Focus the reorder handle of the block `uid` once React has moved it. */
function focusHandle(uid: string) {
  requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-block-handle="${CSS.escape(uid)}"]`)?.focus())
}

/** A list of blocks: each block's form from its blueprint; add, remove, move up/down (also Alt+↑/↓ on the handle). */
export function BlockList({ path, blocks, onChange, allowed, blueprints, errors }: ListProps) {
  const [adding, setAdding] = useState(allowed[0]?.name ?? '')
  const selectId = useId()
  const move = (from: number, to: number) => {
    if (to < 0 || to >= blocks.length) return
    const next = blocks.slice()
    const [b] = next.splice(from, 1)
    next.splice(to, 0, b)
    onChange(next)
    focusHandle(b._uid)
  }
  const add = () => {
    const name = adding || allowed[0]?.name
    if (!name) return
    onChange([...blocks, { component: name, _uid: newUid() }])
  }
  return (
    <div className="flex flex-col gap-3">
      <FieldErrors errors={errors[path]} />
      {blocks.length === 0 ? <p className="text-sm text-slate-600">No blocks yet.</p> : null}
      <ol className="flex flex-col gap-3" aria-label="Blocks">
        {blocks.map((block, i) => (
          <BlockItem
            key={block._uid}
            path={`${path}/${i}`}
            block={block}
            index={i}
            count={blocks.length}
            blueprints={blueprints}
            errors={errors}
            onChange={(b) => onChange(blocks.map((x, j) => (j === i ? b : x)))}
            onRemove={() => onChange(blocks.filter((_, j) => j !== i))}
            onMove={(to) => move(i, to)}
          />
        ))}
      </ol>
      {allowed.length ? (
        <div className="flex items-center gap-2">
          <label htmlFor={selectId} className="text-sm">
            Add block
          </label>
          <select id={selectId} value={adding} onChange={(e) => setAdding(e.target.value)} className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm">
            {allowed.map((b) => (
              <option key={b.name} value={b.name}>
                {b.display_name}
              </option>
            ))}
          </select>
          <Button onClick={add}>Add</Button>
        </div>
      ) : (
        <p className="text-sm text-slate-600">No component can be added here: create a blueprint (is_root for the top level, is_nestable inside blocks).</p>
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
  onChange: (b: Block) => void
  onRemove: () => void
  onMove: (to: number) => void
}

const BlockItem = memo(function BlockItem({ path, block, index, count, blueprints, errors, onChange, onRemove, onMove }: ItemProps) {
  const bp = blueprints.get(block.component)
  const title = bp?.display_name ?? block.component
  return (
    <li className="rounded-lg border border-slate-200 bg-white" data-block-uid={block._uid}>
      <div className="flex items-center gap-2 border-b border-slate-100 bg-slate-50 px-3 py-1.5">
        <button
          type="button"
          data-block-handle={block._uid}
          aria-label={`${title}, block ${index + 1} of ${count}. Alt+Arrow Up or Down moves it.`}
          onKeyDown={(e) => {
            if (!e.altKey) return
            if (e.key === 'ArrowUp') {
              e.preventDefault()
              onMove(index - 1)
            } else if (e.key === 'ArrowDown') {
              e.preventDefault()
              onMove(index + 1)
            }
          }}
          className="cursor-grab rounded px-1 text-slate-600"
        >
          ⠿
        </button>
        <span className="flex-1 text-sm font-semibold">{title}</span>
        <Button className="px-2 py-0.5 text-xs" disabled={index === 0} onClick={() => onMove(index - 1)} aria-label={`Move ${title} up`}>
          ↑
        </Button>
        <Button className="px-2 py-0.5 text-xs" disabled={index === count - 1} onClick={() => onMove(index + 1)} aria-label={`Move ${title} down`}>
          ↓
        </Button>
        <Button className="px-2 py-0.5 text-xs" onClick={onRemove} aria-label={`Remove ${title}`}>
          Remove
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
                onChange(next)
              }}
              blueprints={blueprints}
              errors={errors}
            />
          ))
        ) : (
          <p className="text-sm text-amber-800">This block uses “{block.component}”, which has no blueprint in this Space: it is kept as it is.</p>
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
  const shared = translation !== null && props.def.translatable === false
  // A blocks field's nested paths belong to its blocks; any other field also owns its sub-paths (`link/url`).
  const own =
    props.def.type === 'blocks'
      ? props.errors[props.path]
      : Object.entries(props.errors)
          .filter(([k]) => k === props.path || k.startsWith(`${props.path}/`))
          .flatMap(([, m]) => m)
  const Editor = editorFor(props.def.type)
  const label = (
    <>
      {props.name}
      {props.def.required ? <span className="text-red-700"> *</span> : null}
      <span className="ml-2 text-xs font-normal text-slate-600">{props.def.type}</span>
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
      {shared ? (
        <p className="text-xs text-slate-600">
          Not translated: every locale shows the {translation.primary} value. Change it in {translation.primary}.
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
        describedBy={own?.length ? `${id}-err` : undefined}
        invalid={!!own?.length}
        blueprints={props.blueprints}
        errors={props.errors}
      />
      </fieldset>
      {props.def.type === 'blocks' ? null : <FieldErrors id={`${id}-err`} errors={own} />}
    </div>
  )
}
