import { useMutation, useQuery } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { componentsQuery } from '../../api/queries'
import { useCan } from '../../api/roles'
import { announce } from '../../components/announcer'
import { Button, ErrorNotice } from '../../components/ui'
import type { Block, Blueprint } from '../../fields/types'
import { fieldLabel } from '../../fields/labels'
import { aiStatusQuery } from './queries'
import { t } from './messages'

type Kind = 'title' | 'description'

/** The root block's text fields an SEO text can go into, and the one picked first (by its name) for `kind`. */
function targets(bp: Blueprint | undefined, kind: Kind) {
  const fields = Object.entries(bp?.schema ?? {}).filter(([, d]) => d.type === 'text' || d.type === 'textarea')
  const want = kind === 'title' ? [/seo.*title|meta.*title/i, /title/i] : [/seo.*desc|meta.*desc/i, /desc/i]
  const first = want.map((re) => fields.find(([name]) => re.test(name))?.[0]).find(Boolean) ?? ''
  return { fields, first }
}

/**
 * The Story editor's SEO suggestions: a title (≤ 60 characters) and a meta description (≤ 160) from the model
 * (POST .../ai/seo-meta, nothing saved), each insertable into a text field of the Story's root block: the value lands
 * in the draft as an unsaved edit, which Save makes a version. Shown when AI is on and the role may write and ask.
 */
export function SeoSuggestions({ space, uuid, lang, blocks, onBlocks, canWrite }: { space: string; uuid: string; lang: string; blocks: Block[]; onBlocks: (blocks: Block[]) => void; canWrite: boolean }) {
  const canAsk = useCan(space, 'POST', '/v1/spaces/{space}/ai/seo-meta')
  const status = useQuery({ ...aiStatusQuery(space), enabled: canWrite && canAsk })
  const components = useQuery(componentsQuery(space))
  const titleId = useId()
  const suggest = useMutation({
    mutationFn: async () =>
      (await unwrap(api.POST('/v1/spaces/{space}/ai/seo-meta', { params: { path: { space } }, body: { story_uuid: uuid, lang } }))).data,
    onSuccess: () => announce(t('aiSeo.ready')),
  })
  if (!canWrite || !canAsk || status.data?.enabled !== true) return null
  const root = blocks[0]
  const bp = root ? (components.data ?? []).find((c) => c.name === root.component) as Blueprint | undefined : undefined
  const insert = (field: string, value: string, what: string) => {
    if (!root) return
    onBlocks(blocks.map((b, i) => (i === 0 ? { ...b, [field]: value } : b)))
    announce(t('aiSeo.inserted', { what, field: fieldLabel(bp!.schema[field]!, field) }))
  }
  return (
    <section aria-labelledby={titleId} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="seo-suggestions">
      <h2 id={titleId} className="font-semibold">
        {t('aiSeo.title')}
      </h2>
      <p className="text-sm text-slate-700">{t('aiSeo.intro')}</p>
      <div>
        <Button onClick={() => suggest.mutate()} disabled={suggest.isPending}>
          {suggest.isPending ? t('aiSeo.asking') : t('aiSeo.suggest')}
        </Button>
      </div>
      <ErrorNotice error={suggest.error} />
      {suggest.data ? (
        <dl className="flex flex-col gap-3 text-sm">
          {(['title', 'description'] as const).map((kind) => (
            <Suggestion key={kind} kind={kind} text={suggest.data[kind]} bp={bp} onInsert={insert} />
          ))}
        </dl>
      ) : null}
    </section>
  )
}

function Suggestion({ kind, text, bp, onInsert }: { kind: Kind; text: string; bp: Blueprint | undefined; onInsert: (field: string, value: string, what: string) => void }) {
  const { fields, first } = targets(bp, kind)
  const [field, setField] = useState(first)
  const selectId = useId()
  const what = kind === 'title' ? t('aiSeo.seoTitle') : t('aiSeo.seoDescription')
  return (
    <div className="flex flex-col gap-1" data-seo={kind}>
      <dt className="font-medium">
        {what} <span className="font-normal text-slate-700">{t('aiSeo.length', { n: text.length, max: kind === 'title' ? 60 : 160 })}</span>
      </dt>
      <dd className="flex flex-col gap-2">
        <p className="rounded bg-slate-50 px-2 py-1" data-testid={`seo-${kind}`}>
          {text || t('aiSeo.none')}
        </p>
        {fields.length && text ? (
          <div className="flex flex-wrap items-center gap-2">
            <label htmlFor={selectId} className="text-xs">
              {t('aiSeo.into')}
            </label>
            <select id={selectId} value={field} onChange={(e) => setField(e.target.value)} className="rounded-md border border-slate-300 bg-white px-2 py-1 text-xs">
              <option value="">{t('aiSeo.chooseField')}</option>
              {fields.map(([name, def]) => (
                <option key={name} value={name}>
                  {fieldLabel(def, name)}
                </option>
              ))}
            </select>
            <Button className="px-2 py-1 text-xs" disabled={!field} onClick={() => onInsert(field, text, what)}>
              {t('aiSeo.insert', { what })}
            </Button>
          </div>
        ) : null}
      </dd>
    </div>
  )
}

type Json = { type?: string; text?: string; marks?: { type: string }[]; content?: Json[] }

/**
 * The blocks with `phrase` linked to `href` at its first unlinked occurrence in a richtext field (any block, nested
 * ones too; case ignored), or null when no richtext field holds it.
 */
export function linkPhrase(blocks: Block[], blueprints: Map<string, Blueprint>, phrase: string, href: string): { blocks: Block[]; field: string } | null {
  const needle = phrase.toLowerCase()
  let done: string | null = null
  const inTree = (n: Json): Json => {
    if (done || !n.content) return n
    const out: Json[] = []
    for (const c of n.content) {
      const at = !done && c.type === 'text' && !c.marks?.some((m) => m.type === 'link') ? (c.text ?? '').toLowerCase().indexOf(needle) : -1
      if (at < 0) {
        out.push(done ? c : inTree(c))
        continue
      }
      const text = c.text!
      const piece = (s: string, marks?: Json['marks']): Json[] => (s ? [{ ...c, text: s, ...(marks?.length ? { marks } : {}) }] : [])
      const plain = c.marks?.filter((m) => m.type !== 'link')
      out.push(...piece(text.slice(0, at), plain), ...piece(text.slice(at, at + phrase.length), [...(plain ?? []), { type: 'link', attrs: { href, title: null } } as never]), ...piece(text.slice(at + phrase.length), plain))
      done = 'yes'
    }
    return { ...n, content: out }
  }
  const inBlocks = (list: Block[]): Block[] =>
    list.map((b) => {
      if (done) return b
      const bp = blueprints.get(b.component)
      let next = b
      for (const [name, def] of Object.entries(bp?.schema ?? {})) {
        if (done) break
        const v = b[name]
        if (def.type === 'richtext' && v && typeof v === 'object') {
          const tree = inTree(v as Json)
          if (done) {
            done = fieldLabel(def, name)
            next = { ...next, [name]: tree }
          }
        } else if (def.type === 'blocks' && Array.isArray(v)) {
          const inner = inBlocks(v as Block[])
          if (done) next = { ...next, [name]: inner }
        }
      }
      return next
    })
  const out = inBlocks(blocks)
  return done ? { blocks: out, field: done } : null
}

/**
 * Internal-link suggestions (POST .../ai/internal-links, nothing saved): published Stories of this Space the model
 * ranks, with the phrase of this page that would carry the link. "Insert" links the phrase in the page's rich text:
 * an unsaved edit of the draft.
 */
export function LinkSuggestions({ space, uuid, lang, blocks, onBlocks, canWrite }: { space: string; uuid: string; lang: string; blocks: Block[]; onBlocks: (blocks: Block[]) => void; canWrite: boolean }) {
  const canAsk = useCan(space, 'POST', '/v1/spaces/{space}/ai/internal-links')
  const status = useQuery({ ...aiStatusQuery(space), enabled: canWrite && canAsk })
  const components = useQuery(componentsQuery(space))
  const titleId = useId()
  const [note, setNote] = useState<string | null>(null)
  const suggest = useMutation({
    mutationFn: async () =>
      (await unwrap(api.POST('/v1/spaces/{space}/ai/internal-links', { params: { path: { space } }, body: { story_uuid: uuid, lang } }))).data,
    onSuccess: (d) => announce(t('aiLinks.found', { n: d.length })),
  })
  if (!canWrite || !canAsk || status.data?.enabled !== true) return null
  const blueprints = new Map((components.data ?? []).map((c) => [c.name, c as Blueprint]))
  const insert = (phrase: string, path: string) => {
    const r = linkPhrase(blocks, blueprints, phrase, path)
    const text = r ? t('aiLinks.inserted', { phrase, path, field: r.field }) : t('aiLinks.notFound', { phrase })
    if (r) onBlocks(r.blocks)
    setNote(text)
    announce(text)
  }
  return (
    <section aria-labelledby={titleId} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="link-suggestions">
      <h2 id={titleId} className="font-semibold">
        {t('aiLinks.title')}
      </h2>
      <p className="text-sm text-slate-700">{t('aiLinks.intro')}</p>
      <div>
        <Button onClick={() => suggest.mutate()} disabled={suggest.isPending}>
          {suggest.isPending ? t('aiSeo.asking') : t('aiLinks.suggest')}
        </Button>
      </div>
      <ErrorNotice error={suggest.error} />
      {suggest.data && suggest.data.length === 0 ? <p className="text-sm">{t('aiLinks.none')}</p> : null}
      {suggest.data?.length ? (
        <ul className="flex flex-col gap-2 text-sm">
          {suggest.data.map((l) => (
            <li key={l.story_uuid} className="flex flex-wrap items-center gap-2" data-link={l.full_path}>
              <span>{t('aiLinks.item', { phrase: l.text, path: l.full_path, score: Math.round(l.score * 100) })}</span>
              <Button className="px-2 py-0.5 text-xs" onClick={() => insert(l.text, l.full_path)}>
                {t('aiLinks.insert', { phrase: l.text })}
              </Button>
            </li>
          ))}
        </ul>
      ) : null}
      {note ? <p className="text-sm text-slate-700">{note}</p> : null}
    </section>
  )
}
