import { useQuery } from '@tanstack/react-query'
import { Link } from '@tanstack/react-router'
import { Fragment, type KeyboardEvent, type ReactNode, useId, useMemo, useState } from 'react'
import { componentsQuery } from '../../../api/queries'
import { useCan } from '../../../api/roles'
import { Announcer } from '../../../components/announcer'
import { BlockList, CollabContext, FieldAiContext, TranslationContext } from '../../../components/block-editor'
import { PresenceBar } from '../../../components/collab'
import { ChangeList } from '../../../components/diff-view'
import { Button, Dialog, EmptyState, ErrorNotice, Skeleton, StatusBadge, storyState } from '../../../components/ui'
import type { Blueprint } from '../../../fields/types'
import { t } from '../../../i18n'
import { publicUrl } from './doc'
import { LocaleBar, MissingTranslation, useLocales } from './locale-bar'
import { type EditorPanel, type EditorPanelProps, panelsIn } from './panels'
import { VisualEditor } from '../../visual-editor/visual-editor'
import { EditorToolbar } from './toolbar'
import { useEditorCollab } from './use-editor-collab'
import { useStoryDraft } from './use-story-draft'
import { useFieldAi } from './use-field-ai'

/**
 * The Story editor: a header (name, status, presence, the locale bar, the toolbar), the draft's notices, the form with
 * its panels (panels.tsx: beside it, under it, or as tabs), and the conflict and leave dialogs. The draft
 * (use-story-draft.ts) holds loading, dirty state, save and conflicts.
 */
export function StoryEditor({
  space,
  uuid,
  lang,
  onLang,
}: {
  space: string
  uuid: string
  /** The locale on screen (`undefined`: the Story's own). */
  lang: string | undefined
  /** Switch the locale on screen (the route's `?lang`). */
  onLang: (lang: string | undefined) => void
}) {
  // Save, Publish and the form's controls only for a role that may write (whoami's role against x-min-role).
  const canWrite = useCan(space, 'PUT', '/v1/spaces/{space}/stories/{uuid}')
  const draft = useStoryDraft(space, uuid, lang)
  const { story, primary, missing, doc, dirty, errors, conflict, leaving } = draft
  const components = useQuery(componentsQuery(space))
  const blueprints = useMemo(() => new Map<string, Blueprint>((components.data ?? []).map((c) => [c.name, c as Blueprint])), [components.data])
  const locales = useLocales(space, uuid, lang, draft)
  const collab = useEditorCollab(space, uuid, draft)
  // AI actions on text fields: only where AI is on for the Space and this role may write and use it.
  const fieldAi = useFieldAi(space, uuid, lang ?? draft.story.data?.primary_lang ?? draft.primary.data?.primary_lang, locales.locales, canWrite)

  if ((story.isPending && !missing) || components.isPending || (missing && primary.isPending)) return <Skeleton lines={8} />
  if (story.isError && !missing) return <ErrorNotice error={story.error} onRetry={() => story.refetch()} />
  if (primary.isError) return <ErrorNotice error={primary.error} />
  if (components.isError) return <ErrorNotice error={components.error} onRetry={() => components.refetch()} />
  const s = (story.data ?? primary.data)!
  const roots = [...blueprints.values()].filter((b) => b.is_root)
  const state = storyState(s)
  const problems = Object.entries(errors)
  const panel: EditorPanelProps = { space, uuid, lang: lang ?? s.primary_lang, story: s, draft, collab, canWrite }
  const side = panelsIn('side')

  const form = !draft.showForm ? (
    <MissingTranslation story={s} lang={lang} locales={locales} draft={draft} canWrite={canWrite} roots={roots} blueprints={blueprints} />
  ) : roots.length === 0 && (doc?.blocks.length ?? 0) === 0 ? (
    <EmptyState title={t('editor.noComponent')}>
      {t('editor.noComponentText')}{' '}
      <Link to="/spaces/$space/components" params={{ space }} className="font-medium text-indigo-800 underline">
        {t('nav.components')}
      </Link>
    </EmptyState>
  ) : (
    <div className={`grid items-start gap-4 ${side.some((p) => p.wide) ? 'lg:grid-cols-2' : 'lg:grid-cols-[minmax(0,1fr)_18rem]'}`}>
      <section aria-label={t('editor.content')} className="rounded-lg bg-slate-100 p-3" onFocus={collab.onFocus}>
        <CollabContext.Provider value={collab.collab}>
          <TranslationContext.Provider value={locales.translation}>
            {/* A role that cannot write reads the form: every control in it disabled. */}
            <fieldset disabled={!canWrite} className="contents">
              <FieldAiContext.Provider value={fieldAi}>
                <BlockList path="blocks" blocks={doc?.blocks ?? []} onChange={draft.onBlocks} allowed={roots} blueprints={blueprints} errors={errors} />
              </FieldAiContext.Provider>
            </fieldset>
          </TranslationContext.Provider>
        </CollabContext.Provider>
      </section>
      {side.map((p) => (
        <Fragment key={p.id}>{p.render(panel)}</Fragment>
      ))}
    </div>
  )

  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-center gap-3">
        <Link to="/spaces/$space" params={{ space }} search={{}} className="text-sm text-indigo-800 underline">
          {t('editor.back')}
        </Link>
        <h1 className="text-2xl font-semibold">{s.name}</h1>
        <StatusBadge state={state} />
        <span className="text-sm text-slate-600">
          {t('editor.pathVersion', { path: s.full_path, version: s.version_no })}
          {dirty ? t('editor.unsaved') : ''}
        </span>
        <PresenceBar others={collab.others} />
        <LocaleBar story={s} lang={lang} locales={locales} onChange={onLang} />
        <EditorToolbar
          space={space}
          uuid={uuid}
          story={s}
          state={state}
          draft={draft}
          canWrite={canWrite}
          beside={<VisualEditor space={space} story={s} doc={doc} lang={lang ?? s.primary_lang} dirty={dirty} others={collab.others} />}
        />
      </div>

      {canWrite ? null : (
        <p className="text-sm text-slate-700" data-testid="read-only">
          {t('editor.readOnly')}
        </p>
      )}
      <div aria-live="polite" className="text-sm text-emerald-800">
        {draft.notice}
      </div>
      <Announcer />
      {draft.remote !== null ? (
        <p role="status" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900 ring-1 ring-amber-200" data-testid="remote-version">
          {t('editor.remote', { version: draft.remote })}
        </p>
      ) : null}
      <ErrorNotice error={draft.failure} />
      {problems.length ? (
        <section aria-label={t('editor.problems')} className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 ring-1 ring-red-200">
          <ul>
            {problems.map(([k, msgs]) => (
              <li key={k}>
                <code>{k}</code>: {msgs.join('; ')}
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      {s.status === 'published' ? (
        <p className="text-sm">
          {t('editor.publicUrl')}{' '}
          <a href={publicUrl(space, s.full_path)} className="text-indigo-800 underline" target="_blank" rel="noreferrer" data-testid="public-url">
            {publicUrl(space, s.full_path)}
          </a>
        </p>
      ) : null}

      <EditorTabs tabs={panelsIn('tab')} panel={panel}>
        {form}
      </EditorTabs>

      {panelsIn('below').map((p) => (
        <Fragment key={p.id}>{p.render(panel)}</Fragment>
      ))}

      <Dialog open={conflict !== null} title={t('editor.conflict')} onClose={draft.dismissConflict}>
        <p className="text-sm">
          {t('editor.conflictText', { base: draft.baseVersion ?? '', theirs: conflict?.theirs || t('editor.newer') })}
        </p>
        <h3 className="text-sm font-semibold">{t('editor.theyChanged')}</h3>
        <ChangeList changes={conflict?.changes ?? []} label={t('editor.theirChanges')} limit={50} />
        <div className="flex justify-end gap-2">
          <Button onClick={draft.reload}>{t('editor.reloadTheirs')}</Button>
          <Button tone="danger" onClick={() => draft.save(true)}>
            {t('editor.overwrite')}
          </Button>
        </div>
      </Dialog>

      <Dialog open={leaving.status === 'blocked'} title={t('editor.leaveTitle')} onClose={() => leaving.reset?.()}>
        <p className="text-sm">{t('editor.leaveText')}</p>
        <div className="flex justify-end gap-2">
          <Button onClick={() => leaving.reset?.()}>{t('editor.stay')}</Button>
          <Button tone="danger" onClick={() => leaving.proceed?.()}>
            {t('editor.leave')}
          </Button>
        </div>
      </Dialog>
    </div>
  )
}

/**
 * The form and the editor's `tab` panels: with none (today) the form alone; with some, a tab list ("Content" and
 * one tab per panel, ←/→ move between them) above the chosen one.
 */
function EditorTabs({ tabs, panel, children }: { tabs: EditorPanel[]; panel: EditorPanelProps; children: ReactNode }) {
  const [current, setCurrent] = useState('content')
  const base = useId()
  if (tabs.length === 0) return <>{children}</>
  const ids = ['content', ...tabs.map((p) => p.id)]
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return
    const next = ids[(ids.indexOf(current) + (e.key === 'ArrowRight' ? 1 : ids.length - 1)) % ids.length]!
    setCurrent(next)
    document.getElementById(`${base}-tab-${next}`)?.focus()
  }
  const shown = tabs.find((p) => p.id === current)
  return (
    <div className="flex flex-col gap-3">
      <div role="tablist" aria-label={t('editor.tabs')} className="flex flex-wrap gap-1 border-b border-slate-200" onKeyDown={onKey}>
        {ids.map((id) => {
          const p = tabs.find((x) => x.id === id)
          return (
            <button
              key={id}
              type="button"
              role="tab"
              id={`${base}-tab-${id}`}
              aria-selected={current === id}
              aria-controls={`${base}-panel`}
              tabIndex={current === id ? 0 : -1}
              onClick={() => setCurrent(id)}
              className={`-mb-px border-b-2 px-3 py-1.5 text-sm ${current === id ? 'border-indigo-700 font-semibold' : 'border-transparent text-slate-600'}`}
            >
              {p?.label ? t(p.label) : t('editor.content')}
            </button>
          )
        })}
      </div>
      <div role="tabpanel" id={`${base}-panel`} aria-labelledby={`${base}-tab-${current}`}>
        {shown ? shown.render(panel) : children}
      </div>
    </div>
  )
}
