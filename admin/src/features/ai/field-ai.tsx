import { useEffect, useId, useRef, useState } from 'react'
import { ApiFailure, api } from '../../api/client'
import { announce } from '../../components/announcer'
import { Button } from '../../components/ui'
import type { FieldDef } from '../../fields/types'
import { inputClass } from '../../fields/types'
import { t } from './messages'

/** What the field's text may be at most to be sent (the API takes prompts of at most 8,000 characters). */
export const MAX_FIELD_TEXT = 6000

export interface FieldAiProps {
  space: string
  /** The Story the field belongs to, and the locale on screen (the model sees the Story as context). */
  storyUuid: string
  lang: string
  /** The Space's locales (translate into one of them). */
  locales: string[]
  /** The field's label (shown and announced). */
  label: string
  def: FieldDef
  value: unknown
  onChange: (value: unknown) => void
}

type Action = { kind: 'write'; instruction: string } | { kind: 'shorten' } | { kind: 'translate'; into: string }

/** The text of a field's value: a string as it is, a rich-text tree as its paragraphs (blank lines between). */
export function fieldText(value: unknown): string {
  if (typeof value === 'string') return value
  if (!value || typeof value !== 'object') return ''
  const blocks: string[] = []
  const inline = (n: { type?: string; text?: string; content?: unknown[] }): string =>
    n.type === 'text' ? (n.text ?? '') : n.type === 'hard_break' ? '\n' : (n.content ?? []).map((c) => inline(c as never)).join('')
  const walk = (n: { type?: string; content?: unknown[] }) => {
    const kids = (n.content ?? []) as { type?: string; content?: unknown[] }[]
    if (kids.some((k) => k.type === 'text' || k.type === 'hard_break')) blocks.push(inline(n))
    else for (const k of kids) walk(k)
  }
  walk(value as never)
  return blocks.filter((b) => b.trim()).join('\n\n')
}

/** A field's value from the text the model wrote: rich text becomes paragraphs (a line break inside one). */
export function valueFromText(def: FieldDef, text: string): unknown {
  if (def.type === 'richtext') {
    const paragraphs = text
      .split(/\n{2,}/)
      .map((p) => p.trim())
      .filter(Boolean)
    if (!paragraphs.length) return undefined
    return {
      type: 'doc',
      content: paragraphs.map((p) => ({
        type: 'paragraph',
        content: p.split('\n').flatMap((line, i) => [...(i ? [{ type: 'hard_break' }] : []), ...(line ? [{ type: 'text', text: line }] : [])]),
      })),
    }
  }
  let out = def.type === 'text' ? text.replace(/\s*\n\s*/g, ' ') : text
  if (def.max_length) out = out.slice(0, def.max_length)
  return out === '' && !def.required ? undefined : out
}

/** Text inside <data>…</data> as JSON, as the service passes content: the model is told it is data, never an instruction. */
const asData = (value: unknown) => `<data>\n${JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e')}\n</data>`

function promptFor(action: Action, text: string, def: FieldDef): string {
  const limit = def.max_length ? ` At most ${def.max_length} characters.` : ''
  const shape = def.type === 'text' ? ' One line, no quotes around it.' : def.type === 'richtext' ? ' Plain paragraphs separated by a blank line, no markup.' : ''
  if (action.kind === 'write') {
    return `Write the text of a content field (${def.type}).${shape}${limit} The instruction: ${action.instruction}${text ? `\n\nThe field's current text:\n${asData({ text })}` : ''}`
  }
  if (action.kind === 'shorten') {
    return `Shorten the text inside <data> to about half its length, keeping its meaning, tone and language.${shape}${limit} Answer with the shortened text only.\n${asData({ text })}`
  }
  return `Translate the text inside <data> into the language with the code ${action.into}. Keep numbers, URLs and names as they are.${shape}${limit} Answer with the translation only.\n${asData({ text })}`
}

/**
 * The AI actions of one text, textarea or richtext field: write (from an instruction), shorten, translate. The answer
 * streams into the field as the model writes it (POST .../ai/stream-text, Server-Sent Events), through the field's
 * own onChange: an unsaved edit of the draft like any typing, which Save makes a version. Stop cancels the request
 * (what was written stays); Undo puts back the value from before.
 */
export function FieldAi({ space, storyUuid, lang, locales, label, def, value, onChange }: FieldAiProps) {
  const [open, setOpen] = useState(false)
  const [instruction, setInstruction] = useState('')
  const [into, setInto] = useState(lang)
  const [running, setRunning] = useState(false)
  const [message, setMessage] = useState<{ text: string; error?: boolean } | null>(null)
  const [before, setBefore] = useState<{ value: unknown } | null>(null)
  const onChangeRef = useRef(onChange)
  onChangeRef.current = onChange
  const abort = useRef<AbortController | null>(null)
  const panelId = useId()
  const instructionId = useId()
  const intoId = useId()
  useEffect(() => () => abort.current?.abort(), [])

  const say = (text: string, error = false) => {
    setMessage({ text, error })
    announce(text)
  }

  const run = async (action: Action) => {
    const text = fieldText(value)
    if (action.kind !== 'write' && !text.trim()) return say(t('aiField.empty'), true)
    if (text.length > MAX_FIELD_TEXT) return say(t('aiField.tooLong', { max: MAX_FIELD_TEXT }), true)
    const controller = new AbortController()
    abort.current = controller
    const original = value
    setBefore({ value: original })
    setRunning(true)
    say(t('aiField.streaming', { field: label }))
    let written = ''
    let failed: string | null = null
    try {
      const { response } = await api.POST('/v1/spaces/{space}/ai/stream-text', {
        params: { path: { space } },
        body: { prompt: promptFor(action, text, def), context: { story_uuid: storyUuid, lang } },
        parseAs: 'stream',
        signal: controller.signal,
      })
      if (!response.ok || !response.body) {
        const body = (await response.json().catch(() => ({}))) as { message?: string }
        throw new ApiFailure(response.status, { error: 'error', message: body.message ?? `The server answered ${response.status}.` })
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
      let buffer = ''
      for (;;) {
        const { done, value: chunk } = await reader.read()
        if (done) break
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const raw = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const event = /^event: (.*)$/m.exec(raw)?.[1] ?? 'message'
          const data = /^data: (.*)$/m.exec(raw)?.[1]
          if (!data) continue
          const j = JSON.parse(data) as { text?: string; message?: string }
          if (event === 'error') failed = j.message ?? 'error'
          else if (event === 'message' && typeof j.text === 'string') {
            written += j.text
            onChangeRef.current(valueFromText(def, written.trimStart()))
          }
        }
      }
      if (failed) throw new Error(failed)
      onChangeRef.current(valueFromText(def, written.trim()))
      say(t('aiField.done', { field: label }))
    } catch (err) {
      if (controller.signal.aborted) say(t('aiField.stopped', { field: label }))
      else {
        if (!written) setBefore(null)
        say(t('aiField.failed', { message: err instanceof Error ? err.message : String(err) }), true)
      }
    } finally {
      abort.current = null
      setRunning(false)
    }
  }

  const undo = () => {
    if (!before) return
    onChangeRef.current(before.value)
    setBefore(null)
    say(t('aiField.undone', { field: label }))
  }

  return (
    <div className="flex flex-col gap-2" data-ai-field={label}>
      <div className="flex flex-wrap items-center gap-2">
        <Button
          className="px-2 py-0.5 text-xs"
          aria-expanded={open}
          aria-controls={panelId}
          aria-label={t('aiField.openFor', { field: label })}
          onClick={() => setOpen((o) => !o)}
        >
          {t('aiField.open')}
        </Button>
        {running ? (
          <Button className="px-2 py-0.5 text-xs" tone="danger" onClick={() => abort.current?.abort()}>
            {t('aiField.stop')}
          </Button>
        ) : before ? (
          <Button className="px-2 py-0.5 text-xs" onClick={undo}>
            {t('aiField.undo')}
          </Button>
        ) : null}
        {message ? (
          <span className={`text-xs ${message.error ? 'text-red-800' : 'text-slate-700'}`} data-testid="ai-field-status">
            {message.text}
          </span>
        ) : null}
      </div>
      {open ? (
        <div id={panelId} role="group" aria-label={t('aiField.actions', { field: label })} className="flex flex-col gap-2 rounded-md bg-indigo-50 p-2 ring-1 ring-indigo-200">
          <div className="flex flex-wrap items-end gap-2">
            <Button className="px-2 py-1 text-xs" disabled={running} onClick={() => void run({ kind: 'shorten' })}>
              {t('aiField.shorten')}
            </Button>
            {locales.length > 1 ? (
              <>
                <label htmlFor={intoId} className="text-xs">
                  {t('aiField.translateInto')}
                </label>
                <select id={intoId} value={into} onChange={(e) => setInto(e.target.value)} className="rounded-md border border-slate-300 bg-white px-2 py-1 text-xs">
                  {locales.map((l) => (
                    <option key={l} value={l}>
                      {l}
                    </option>
                  ))}
                </select>
                <Button className="px-2 py-1 text-xs" disabled={running} onClick={() => void run({ kind: 'translate', into })}>
                  {t('aiField.translate')}
                </Button>
              </>
            ) : null}
          </div>
          <form
            className="flex flex-wrap items-end gap-2"
            onSubmit={(e) => {
              e.preventDefault()
              if (instruction.trim()) void run({ kind: 'write', instruction: instruction.trim().slice(0, 1000) })
            }}
          >
            <div className="flex min-w-48 flex-1 flex-col gap-1">
              <label htmlFor={instructionId} className="text-xs">
                {t('aiField.instruction')}
              </label>
              <input
                id={instructionId}
                value={instruction}
                maxLength={1000}
                onChange={(e) => setInstruction(e.target.value)}
                aria-describedby={`${instructionId}-hint`}
                className={`${inputClass} text-xs`}
              />
              <span id={`${instructionId}-hint`} className="text-xs text-slate-700">
                {t('aiField.instructionHint')}
              </span>
            </div>
            <Button type="submit" className="px-2 py-1 text-xs" disabled={running || !instruction.trim()}>
              {t('aiField.write')}
            </Button>
          </form>
        </div>
      ) : null}
    </div>
  )
}
