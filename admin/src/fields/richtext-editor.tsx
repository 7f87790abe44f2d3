import { baseKeymap, setBlockType, toggleMark } from 'prosemirror-commands'
import { history, redo, undo } from 'prosemirror-history'
import { keymap } from 'prosemirror-keymap'
import type { MarkType, Node as PMNode } from 'prosemirror-model'
import { liftListItem, sinkListItem, splitListItem, wrapInList } from 'prosemirror-schema-list'
import { type Command, EditorState, type Plugin, TextSelection } from 'prosemirror-state'
import { EditorView } from 'prosemirror-view'
import { useEffect, useId, useRef, useState } from 'react'
import { Button, Dialog, FieldErrors } from '../components/ui'
import { JsonField } from './json'
import { t } from '../i18n'
import { type Parsed, parseRichtext, type RichText, richtextSchema as schema, richtextValue, safeHref } from './richtext-schema'
import { type FieldProps, inputClass } from './types'

const { bold, italic, link } = schema.marks
const { paragraph, heading, bullet_list, ordered_list, list_item, hard_break } = schema.nodes

/** The text range of the link around the cursor (or the selection), if there is one. */
function linkRange(state: EditorState): { from: number; to: number; href: string } | null {
  const { $from, from, to, empty } = state.selection
  if (!empty) {
    let found: { from: number; to: number; href: string } | null = null
    state.doc.nodesBetween(from, to, (n) => {
      const m = link!.isInSet(n.marks)
      if (m && !found) found = { from, to, href: m.attrs.href }
    })
    return found
  }
  // Consecutive text nodes carrying the same link mark form one link; find the one touching the cursor.
  const start = $from.start()
  let range: { from: number; to: number; href: string } | null = null
  let run: { from: number; to: number; href: string; mark: unknown } | null = null
  $from.parent.forEach((child, offset) => {
    const m = link!.isInSet(child.marks)
    const end = start + offset + child.nodeSize
    if (m && run && run.mark === m) run.to = end
    else run = m ? { from: start + offset, to: end, href: m.attrs.href, mark: m } : null
    if (run && run.from <= $from.pos && $from.pos <= run.to) range = { from: run.from, to: run.to, href: run.href }
  })
  return range
}

const markActive = (state: EditorState, type: MarkType) => {
  const { from, $from, to, empty } = state.selection
  return empty ? !!type.isInSet(state.storedMarks ?? $from.marks()) : state.doc.rangeHasMark(from, to, type)
}

function blockKind(state: EditorState): string {
  const p = state.selection.$from.parent
  return p.type === heading ? `h${p.attrs.level}` : p.type === paragraph ? 'p' : ''
}

function inList(state: EditorState, type: typeof bullet_list): boolean {
  const { $from } = state.selection
  for (let d = $from.depth; d > 0; d--) if ($from.node(d).type === type) return true
  return false
}

const hardBreak: Command = (state, dispatch) => {
  dispatch?.(state.tr.replaceSelectionWith(hard_break!.create()).scrollIntoView())
  return true
}

function plugins(openLink: () => void): Plugin[] {
  return [
    history(),
    keymap({
      'Mod-z': undo,
      'Mod-y': redo,
      'Shift-Mod-z': redo,
      'Mod-b': toggleMark(bold!),
      'Mod-i': toggleMark(italic!),
      'Mod-k': () => {
        openLink()
        return true
      },
      'Mod-Alt-0': setBlockType(paragraph!),
      'Mod-Alt-1': setBlockType(heading!, { level: 1 }),
      'Mod-Alt-2': setBlockType(heading!, { level: 2 }),
      'Mod-Alt-3': setBlockType(heading!, { level: 3 }),
      'Shift-Mod-8': wrapInList(bullet_list!),
      'Shift-Mod-7': wrapInList(ordered_list!),
      Enter: splitListItem(list_item!),
      'Mod-[': liftListItem(list_item!),
      'Mod-]': sinkListItem(list_item!),
      'Shift-Enter': hardBreak,
    }),
    keymap(baseKeymap),
  ]
}

/**
 * The `richtext` field: a ProseMirror editor storing the API's rich-text tree (see richtext-schema.ts). Toolbar and
 * shortcuts: Ctrl/⌘+B bold, +I italic, +K link, +Alt+0/1/2/3 paragraph or heading, +Shift+8/7 lists, Ctrl+[ / ] list
 * level, Shift+Enter line break, Ctrl+Z / Ctrl+Y undo and redo. Tab is left to move focus out.
 *
 * The value is only replaced when the user edits: a tree loaded from the API and not touched saves back unchanged.
 * A tree the schema cannot read (a node or mark it does not know) is edited as JSON instead, so nothing is dropped.
 */
export default function RichtextEditor(props: FieldProps<RichText | string>) {
  const [parsed, setParsed] = useState<Parsed>(() => parseRichtext(props.value))
  if ('error' in parsed) {
    return (
      <div className="flex flex-col gap-1">
        <JsonField {...(props as FieldProps<unknown>)} />
        <p className="text-xs text-amber-800">{t('rt.unknown', { error: parsed.error })}</p>
      </div>
    )
  }
  return <ProseMirrorField {...props} initial={parsed.doc} fromMarkup={!!parsed.fromMarkup} onUnreadable={(error) => setParsed({ error })} />
}

function ProseMirrorField({
  id,
  name,
  value,
  onChange,
  describedBy,
  invalid,
  initial,
  fromMarkup,
  onUnreadable,
}: FieldProps<RichText | string> & { initial: PMNode; fromMarkup: boolean; onUnreadable: (error: string) => void }) {
  const host = useRef<HTMLDivElement>(null)
  const view = useRef<EditorView | null>(null)
  const emitted = useRef<unknown>(value)
  const onChangeRef = useRef(onChange)
  onChangeRef.current = onChange
  const [, setTick] = useState(0)
  const [linkOpen, setLinkOpen] = useState(false)
  const [labelId, setLabelId] = useState<string | undefined>(undefined)
  const openLinkRef = useRef(() => setLinkOpen(true))

  const attributes = () => ({
    id,
    role: 'textbox',
    'aria-multiline': 'true',
    ...(labelId ? { 'aria-labelledby': labelId } : { 'aria-label': name }),
    ...(describedBy ? { 'aria-describedby': describedBy } : {}),
    ...(invalid ? { 'aria-invalid': 'true' } : {}),
    'data-richtext': name,
    class: `${inputClass} min-h-24 whitespace-pre-wrap break-words outline-none focus:ring-2 focus:ring-indigo-600 [&_a]:text-indigo-800 [&_a]:underline [&_a[data-unsafe]]:text-red-800 [&_blockquote]:border-l-4 [&_blockquote]:border-slate-300 [&_blockquote]:pl-3 [&_code]:rounded [&_code]:bg-slate-100 [&_code]:px-1 [&_h1]:text-2xl [&_h1]:font-bold [&_h2]:text-xl [&_h2]:font-bold [&_h3]:text-lg [&_h3]:font-semibold [&_ol]:list-decimal [&_ol]:pl-6 [&_p]:my-1 [&_pre]:bg-slate-100 [&_pre]:p-2 [&_ul]:list-disc [&_ul]:pl-6`,
  })

  // The label of the field (block-editor renders <label for={id}>): name the editable by it, focus it on click.
  useEffect(() => {
    const label = document.querySelector<HTMLLabelElement>(`label[for="${CSS.escape(id)}"]`)
    if (!label) return
    if (!label.id) label.id = `${id}-label`
    setLabelId(label.id)
    const focus = () => view.current?.focus()
    label.addEventListener('click', focus)
    return () => label.removeEventListener('click', focus)
  }, [id])

  useEffect(() => {
    const v = new EditorView(host.current!, {
      state: EditorState.create({ doc: initial, plugins: plugins(() => openLinkRef.current()) }),
      attributes,
      // A disabled <fieldset> around the field (a shared field in a translation) makes it read-only.
      editable: () => !host.current?.closest('fieldset:disabled'),
      dispatchTransaction(tr) {
        const next = v.state.apply(tr)
        v.updateState(next)
        if (tr.docChanged) {
          const out = richtextValue(next.doc)
          emitted.current = out
          onChangeRef.current(out)
        }
        setTick((n) => n + 1)
      },
    })
    view.current = v
    return () => {
      v.destroy()
      view.current = null
    }
    // The view is made once; later props reach it through setProps below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [])

  // New attributes (errors, label) and editability on every render.
  useEffect(() => {
    view.current?.setProps({ attributes: attributes() })
  })

  // A value from outside (a reload, another locale, a restored version) replaces the document.
  useEffect(() => {
    const v = view.current
    if (!v || value === emitted.current) return
    const p = parseRichtext(value)
    emitted.current = value
    if ('error' in p) return onUnreadable(p.error)
    v.updateState(EditorState.create({ doc: p.doc, plugins: v.state.plugins }))
    setTick((n) => n + 1)
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [value])

  const run = (cmd: Command) => (e: React.MouseEvent) => {
    e.preventDefault()
    const v = view.current
    if (!v) return
    cmd(v.state, v.dispatch, v)
    v.focus()
  }
  const state = view.current?.state
  const tool = (label: string, keys: string, cmd: Command, pressed?: boolean, text?: string) => (
    <button
      type="button"
      aria-label={label}
      title={`${label} (${keys})`}
      aria-pressed={pressed}
      onMouseDown={(e) => e.preventDefault()}
      onClick={run(cmd)}
      className="min-w-8 rounded px-2 py-1 text-sm text-slate-800 hover:bg-slate-100 aria-pressed:bg-indigo-100 aria-pressed:text-indigo-900 disabled:text-slate-400"
    >
      {text ?? label}
    </button>
  )
  const kind = state ? blockKind(state) : 'p'
  return (
    <div className="flex flex-col gap-1">
      <div role="toolbar" aria-label={t('rt.formatting', { name })} className="flex flex-wrap items-center gap-1 rounded-md bg-slate-50 p-1 ring-1 ring-slate-200">
        <select
          aria-label={t('rt.blockType', { name })}
          value={kind}
          onChange={(e) => {
            const v = view.current
            if (!v) return
            const k = e.target.value
            const cmd = k === 'p' ? setBlockType(paragraph!) : setBlockType(heading!, { level: Number(k.slice(1)) })
            cmd(v.state, v.dispatch, v)
            v.focus()
          }}
          className="rounded border border-slate-300 bg-white px-1 py-0.5 text-sm"
        >
          {kind === '' ? <option value="">—</option> : null}
          <option value="p">{t('rt.paragraph')}</option>
          <option value="h1">{t('rt.heading', { level: 1 })}</option>
          <option value="h2">{t('rt.heading', { level: 2 })}</option>
          <option value="h3">{t('rt.heading', { level: 3 })}</option>
        </select>
        {tool(t('rt.bold'), 'Ctrl+B', toggleMark(bold!), state ? markActive(state, bold!) : false, 'B')}
        {tool(t('rt.italic'), 'Ctrl+I', toggleMark(italic!), state ? markActive(state, italic!) : false, 'I')}
        <button
          type="button"
          aria-label={t('rt.link')}
          title={t('rt.linkTitle')}
          aria-pressed={state ? markActive(state, link!) : false}
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => setLinkOpen(true)}
          className="rounded px-2 py-1 text-sm text-slate-800 underline hover:bg-slate-100 aria-pressed:bg-indigo-100 disabled:text-slate-400"
        >
          {t('rt.link')}
        </button>
        {tool(t('rt.bullets'), 'Ctrl+Shift+8', wrapInList(bullet_list!), state ? inList(state, bullet_list!) : false)}
        {tool(t('rt.numbers'), 'Ctrl+Shift+7', wrapInList(ordered_list!), state ? inList(state, ordered_list!) : false)}
        {tool(t('rt.lift'), 'Ctrl+[', liftListItem(list_item!), undefined, '⇤')}
        {tool(t('rt.undo'), 'Ctrl+Z', undo, undefined, '↶')}
        {tool(t('rt.redo'), 'Ctrl+Y', redo, undefined, '↷')}
      </div>
      <div ref={host} />
      {fromMarkup ? <p className="text-xs text-slate-600">{t('rt.fromMarkup')}</p> : null}
      {linkOpen && view.current ? <LinkDialog view={view.current} onClose={() => setLinkOpen(false)} /> : null}
    </div>
  )
}

function LinkDialog({ view, onClose }: { view: EditorView; onClose: () => void }) {
  const existing = linkRange(view.state)
  const [href, setHref] = useState(existing?.href ?? '')
  const [error, setError] = useState<string[] | undefined>(undefined)
  const inputId = useId()
  const close = () => {
    onClose()
    view.focus()
  }
  const apply = (e: React.FormEvent) => {
    e.preventDefault()
    const url = href.trim()
    if (!safeHref(url)) return setError([t('rt.badLink')])
    const { state } = view
    const mark = link!.create({ href: url })
    let tr = state.tr
    const range = existing ?? (state.selection.empty ? null : { from: state.selection.from, to: state.selection.to })
    if (range) tr = tr.removeMark(range.from, range.to, link!).addMark(range.from, range.to, mark)
    else {
      // Nothing selected: the URL itself becomes the linked text.
      const at = state.selection.from
      tr = tr.insert(at, schema.text(url, [mark]))
      tr = tr.setSelection(TextSelection.create(tr.doc, at + url.length))
    }
    view.dispatch(tr.scrollIntoView())
    close()
  }
  const remove = () => {
    if (existing) view.dispatch(view.state.tr.removeMark(existing.from, existing.to, link!))
    close()
  }
  return (
    <Dialog open title={existing ? t('rt.editLink') : t('rt.addLink')} onClose={close}>
      <form onSubmit={apply} className="flex flex-col gap-3">
        <label htmlFor={inputId} className="text-sm font-medium">
          {t('rt.url')}
        </label>
        <input
          id={inputId}
          autoFocus
          value={href}
          onChange={(e) => setHref(e.target.value)}
          placeholder={t('field.link.placeholder')}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${inputId}-err` : undefined}
          className={inputClass}
        />
        <FieldErrors id={`${inputId}-err`} errors={error} />
        <div className="flex justify-end gap-2">
          {existing ? (
            <Button tone="danger" onClick={remove}>
              {t('rt.removeLink')}
            </Button>
          ) : null}
          <Button onClick={close}>{t('common.cancel')}</Button>
          <Button tone="primary" type="submit">
            {t('rt.apply')}
          </Button>
        </div>
      </form>
    </Dialog>
  )
}
