import { useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi, Link, useBlocker } from '@tanstack/react-router'
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { ApiFailure, api, unwrap } from '../api/client'
import { componentsQuery, localesQuery, spacesQuery, storyQuery } from '../api/queries'
import { useCan } from '../api/roles'
import { Announcer } from '../components/announcer'
import { type Person, BlockList, CollabContext, type CollabView, FallbackContext, TranslationContext } from '../components/block-editor'
import { blockOfPath, type CommentTarget, CommentsPanel, commentCounts, invalidateComments, PresenceBar, useComments, useLiveStream, usePresence } from '../components/collab'
import { ChangeList } from '../components/diff-view'
import { type Change, diffStories } from '../components/doc-diff'
import { DeleteStoryDialog } from '../components/delete-story-dialog'
import { PreviewButton } from '../components/preview-button'
import { useScreenCommand } from '../components/command-palette'
import { toast } from '../components/toast'
import { SchedulePanel } from '../components/schedule'
import { VersionsPanel } from '../components/versions'
import { StoryAnalyticsPanel } from '../features/analytics/story-panel'
import { Button, Dialog, EmptyState, ErrorNotice, Skeleton, StatusBadge, storyState } from '../components/ui'
import type { Block, Blueprint } from '../fields/types'
import { t } from '../i18n'

const route = getRouteApi('/app/spaces/$space/stories/$uuid')

interface Doc {
  type: 'doc'
  blocks: Block[]
}

const asDoc = (content: unknown): Doc => {
  const c = content as Partial<Doc> | null | undefined
  return { type: 'doc', blocks: Array.isArray(c?.blocks) ? (c.blocks as Block[]) : [] }
}

/** The `_uid` → path of every block of a document (comments anchor by the saved draft's paths). */
function blockPaths(doc: Doc | null): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (blocks: unknown, prefix: string) => {
    if (!Array.isArray(blocks)) return
    blocks.forEach((b, i) => {
      if (!b || typeof b !== 'object' || typeof (b as Block)._uid !== 'string') return
      const path = `${prefix}/${i}`
      out.set((b as Block)._uid, path)
      for (const [k, v] of Object.entries(b)) if (Array.isArray(v)) walk(v, `${path}/${k}`)
    })
  }
  walk(doc?.blocks, 'blocks')
  return out
}

/**
 * The locales a reader of `lang` gets, in order: the tag, its explicit fallback, its language subtag, the Space
 * default (as the public read resolves them); the Story's own locale is the last resort.
 */
export function localeChain(lang: string, locales: { code: string; fallback: string | null; is_default: boolean }[], own: string): string[] {
  const codes = new Set(locales.map((l) => l.code))
  const chain: string[] = []
  const add = (c: string | null | undefined) => {
    if (c && codes.has(c) && !chain.includes(c)) chain.push(c)
  }
  add(lang)
  add(locales.find((l) => l.code === lang)?.fallback)
  add(lang.split('-')[0])
  add(locales.find((l) => l.is_default)?.code)
  if (!chain.includes(own)) chain.push(own)
  return chain
}

const NO_ERRORS: Record<string, string[]> = {}

const CONFIRM_VERB = { publish: 'stories.publish', unpublish: 'stories.unpublish', archive: 'editor.archive' } as const

/** The public (CDN) URL of a published Story. */
export const publicUrl = (space: string, fullPath: string) => `${location.origin}/v1/cdn/${encodeURIComponent(space)}/stories${fullPath}`

export function StoryEditorScreen() {
  const { space, uuid } = route.useParams()
  // Save, Publish and the form's controls only for a role that may write (whoami's role against x-min-role).
  const canWrite = useCan(space, 'PUT', '/v1/spaces/{space}/stories/{uuid}')
  const { lang } = route.useSearch()
  const queryClient = useQueryClient()
  const navigate = route.useNavigate()
  const story = useQuery(storyQuery(space, uuid, lang))
  // The Story in its own locale: the header while a translation is started, and what a new translation starts from.
  const primary = useQuery({ ...storyQuery(space, uuid), enabled: lang !== undefined })
  const spaces = useQuery(spacesQuery())
  const locales = spaces.data?.find((x) => x.slug === space)?.locales ?? []
  const missing = story.error instanceof ApiFailure && story.error.body.error === 'translation_not_found'
  const [startedIn, setStartedIn] = useState<string | null>(null)
  const components = useQuery(componentsQuery(space))
  const blueprints = useMemo(() => new Map<string, Blueprint>((components.data ?? []).map((c) => [c.name, c as Blueprint])), [components.data])

  const [doc, setDoc] = useState<Doc | null>(null)
  const [baseVersion, setBaseVersion] = useState<number | null>(null)
  const [dirty, setDirty] = useState(false)
  const [errors, setErrors] = useState<Record<string, string[]>>({})
  const [failure, setFailure] = useState<unknown>(null)
  const [saving, setSaving] = useState(false)
  const [notice, setNotice] = useState<string | null>(null)
  // A 409: the version saved meanwhile, and what it changed against the version these edits started from.
  const [conflict, setConflict] = useState<null | { theirs: number; changes: Change[] }>(null)
  const [confirm, setConfirm] = useState<null | 'publish' | 'unpublish' | 'archive'>(null)
  // The command palette's "Publish this Story": the same confirmation as the Publish button (unsaved edits first).
  const paletteDirty = useRef(dirty)
  paletteDirty.current = dirty
  const canPublish = useCan(space, 'POST', '/v1/spaces/{space}/stories/{uuid}/publish')
  const canDelete = useCan(space, 'DELETE', '/v1/spaces/{space}/stories/{uuid}')
  const [deleting, setDeleting] = useState<null | { uuid: string; name: string }>(null)
  useScreenCommand(
    useCallback(
      (command) => {
        if (command !== 'publish' || !canPublish) return
        if (paletteDirty.current) toast(t('palette.saveFirst'), 'error')
        else setConfirm('publish')
      },
      [canPublish],
    ),
  )
  // The document and name the current edits started from (what "their changes" are measured against).
  const base = useRef<{ doc: Doc | null; name: string }>({ doc: null, name: '' })
  const baseVersionRef = useRef(baseVersion)
  baseVersionRef.current = baseVersion
  const savingRef = useRef(false)
  // A newer version announced by the live stream while this editor holds unsaved changes.
  const [remote, setRemote] = useState<number | null>(null)

  // Take the server's document when it arrives (first load, reload), not while the editor holds unsaved changes.
  useEffect(() => {
    if (story.data && (!dirty || baseVersion === null)) {
      const d = asDoc(story.data.content)
      setDoc(d)
      setBaseVersion(story.data.version_no)
      base.current = { doc: d, name: story.data.name }
      setRemote(null)
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [story.data])

  // Locales: where a missing translation's values come from (the first locale of its fallback chain with content).
  const localeList = useQuery({ ...localesQuery(space), enabled: locales.length > 1 })
  const ownLang = (story.data ?? primary.data)?.primary_lang
  const fallbackFrom =
    missing && lang && primary.data && localeList.data
      ? localeChain(lang, localeList.data, primary.data.primary_lang).find((c) => c !== lang && (c === primary.data.primary_lang || primary.data.translations.includes(c)))
      : undefined
  const fallbackStory = useQuery({ ...storyQuery(space, uuid, fallbackFrom), enabled: fallbackFrom !== undefined && fallbackFrom !== ownLang })
  const fallbackSource = fallbackFrom === undefined ? undefined : fallbackFrom === ownLang ? primary.data : fallbackStory.data
  const translationValue = useMemo(() => (lang && ownLang && lang !== ownLang ? { lang, primary: ownLang } : null), [lang, ownLang])
  const fallbackValue = useMemo(() => (lang && fallbackFrom ? { lang, from: fallbackFrom } : null), [lang, fallbackFrom])

  // Presence, comments and the live stream.
  const presence = usePresence(space, uuid)
  const dirtyRef = useRef(dirty)
  dirtyRef.current = dirty
  const live = useLiveStream(space, uuid, (event, data) => {
    if (event === 'open') {
      // (Re)connected: catch up on what may have happened while the stream was down.
      void presence.refresh()
      void invalidateComments(queryClient, space, uuid)
    } else if (event === 'presence') void presence.refresh()
    else if (event === 'comment') void invalidateComments(queryClient, space, uuid)
    else if (event === 'story') {
      const n = (data as { version_no?: unknown } | null)?.version_no
      if (typeof n !== 'number' || savingRef.current || (baseVersionRef.current !== null && n <= baseVersionRef.current)) return
      if (dirtyRef.current) setRemote(n)
      else void queryClient.invalidateQueries({ queryKey: ['/v1/spaces', space, 'stories', uuid] })
    }
  })
  const comments = useComments(space, uuid, live)
  const counts = useMemo(() => commentCounts(comments.data), [comments.data])
  const presenceByBlock = useMemo(() => {
    const m = new Map<string, Person[]>()
    for (const o of presence.others) {
      const at = blockOfPath(o.block_path)
      m.set(at, [...(m.get(at) ?? []), { sessionId: o.session_id, userId: o.user_id, name: o.user_name }])
    }
    return m
  }, [presence.others])
  const [commentTarget, setCommentTarget] = useState<CommentTarget | null>(null)
  const openComments = useCallback((uid: string, path: string, title: string) => setCommentTarget({ uid, path, title }), [])
  const collab = useMemo<CollabView>(() => ({ presence: presenceByBlock, comments: counts, openComments }), [presenceByBlock, counts, openComments])
  const savedPaths = useMemo(() => blockPaths(story.data ? asDoc(story.data.content) : null), [story.data])
  const savedPath = useCallback((uid: string) => savedPaths.get(uid), [savedPaths])
  const onBlocks = useCallback((blocks: Block[]) => {
    setDoc({ type: 'doc', blocks })
    setDirty(true)
    setNotice(null)
  }, [])

  const refresh = () => queryClient.invalidateQueries({ queryKey: ['/v1/spaces', space] })

  const save = useCallback(
    async (overwrite = false) => {
      const current = story.data ?? primary.data
      if (!doc || !current) return
      setSaving(true)
      savingRef.current = true
      setFailure(null)
      setNotice(null)
      try {
        let expected = baseVersion ?? current.version_no
        if (overwrite) {
          // Overwrite: save on top of whatever is current now.
          const latest = await unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}', { params: { path: { space, uuid }, query: lang ? { lang } : {} } }))
          expected = latest.data.version_no
        }
        const { data } = await unwrap(
          api.PUT('/v1/spaces/{space}/stories/{uuid}', {
            params: { path: { space, uuid } },
            body: { content: doc, expected_version_no: expected, ...(lang ? { lang } : {}) },
          }),
        )
        setErrors({})
        setDirty(false)
        setConflict(null)
        setRemote(null)
        setBaseVersion(data.version_no)
        baseVersionRef.current = data.version_no
        base.current = { doc, name: data.name }
        setStartedIn(null)
        queryClient.setQueryData(storyQuery(space, uuid, lang).queryKey, data)
        setNotice(t('editor.saved', { version: data.version_no }))
        await refresh()
      } catch (err) {
        if (err instanceof ApiFailure && err.status === 422 && err.body.errors) {
          setErrors(err.body.errors)
          setFailure(new Error(t('editor.notSaved', { count: Object.keys(err.body.errors).length })))
        } else if (err instanceof ApiFailure && err.status === 409 && err.body.error === 'version_conflict') {
          // What the newer version changed, against the version these edits started from.
          let theirs = 0
          let changes: Change[] = []
          try {
            const latest = await unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}', { params: { path: { space, uuid }, query: lang ? { lang } : {} } }))
            theirs = latest.data.version_no
            changes = diffStories({ name: base.current.name, content: base.current.doc }, { name: latest.data.name, content: latest.data.content })
          } catch {}
          setConflict({ theirs, changes })
        } else setFailure(err)
      } finally {
        setSaving(false)
        savingRef.current = false
      }
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [doc, story.data, primary.data, baseVersion, space, uuid, lang],
  )

  // Ctrl/Cmd+S saves; leaving the page with unsaved changes asks first.
  const saveRef = useRef(save)
  saveRef.current = save
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
        e.preventDefault()
        void saveRef.current()
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [])
  const leaving = useBlocker({ shouldBlockFn: () => dirtyRef.current, enableBeforeUnload: () => dirtyRef.current, withResolver: true })

  const reload = async () => {
    setDirty(false)
    setConflict(null)
    setRemote(null)
    setErrors({})
    const fresh = await queryClient.fetchQuery({ ...storyQuery(space, uuid, lang), staleTime: 0 })
    const d = asDoc(fresh.content)
    setDoc(d)
    setBaseVersion(fresh.version_no)
    base.current = { doc: d, name: fresh.name }
  }

  const publishing = async (action: 'publish' | 'unpublish' | 'archive') => {
    setConfirm(null)
    setFailure(null)
    try {
      const path = `/v1/spaces/{space}/stories/{uuid}/${action}` as const
      const { data } = await unwrap(api.POST(path, { params: { path: { space, uuid } } }))
      queryClient.setQueryData(storyQuery(space, uuid, lang).queryKey, (old) => (old ? { ...old, ...data, content: old.content } : old))
      setNotice(action === 'publish' ? t('editor.published') : action === 'unpublish' ? t('editor.unpublished') : t('editor.archived'))
      await refresh()
    } catch (err) {
      setFailure(err)
    }
  }

  if ((story.isPending && !missing) || components.isPending || (missing && primary.isPending)) return <Skeleton lines={8} />
  if (story.isError && !missing) return <ErrorNotice error={story.error} onRetry={() => story.refetch()} />
  if (primary.isError) return <ErrorNotice error={primary.error} />
  if (components.isError) return <ErrorNotice error={components.error} onRetry={() => components.refetch()} />
  const s = (story.data ?? primary.data)!
  const startFrom = fallbackSource ?? primary.data
  const startTranslation = () => {
    const d = asDoc(startFrom?.content)
    setDoc(d)
    base.current = { doc: d, name: startFrom?.name ?? '' }
    setBaseVersion(primary.data?.version_no ?? null)
    setStartedIn(lang ?? null)
    setDirty(true)
  }
  const showForm = !missing || startedIn === lang
  // For a locale without a translation: the locale its readers get instead.
  const shownFrom = (l: string) => {
    const from = localeList.data ? localeChain(l, localeList.data, s.primary_lang).find((c) => c !== l && (c === s.primary_lang || s.translations.includes(c))) : undefined
    return from ? t('editor.shows', { from }) : ''
  }
  const roots = [...blueprints.values()].filter((b) => b.is_root)
  const state = storyState(s)
  const problems = Object.entries(errors)

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
        <PresenceBar others={presence.others} />
        {locales.length > 1 ? (
          <label className="flex items-center gap-1 text-sm">
            {t('editor.locale')}
            <select
              value={lang ?? s.primary_lang}
              onChange={(e) => navigate({ search: { lang: e.target.value === s.primary_lang ? undefined : e.target.value } })}
              className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm"
            >
              {locales.map((l) => (
                <option key={l} value={l}>
                  {l}
                  {l === s.primary_lang ? t('editor.own') : s.translations.includes(l) ? '' : t('editor.noTranslationYet', { shows: shownFrom(l) })}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <div className="ml-auto flex flex-wrap gap-2">
          {canWrite ? (
            <Button tone="primary" onClick={() => save()} disabled={saving || !dirty} aria-keyshortcuts="Control+S">
              {saving ? t('editor.saving') : t('editor.save')}
            </Button>
          ) : null}
          {!s.is_folder ? <PreviewButton space={space} path={s.full_path} dirty={dirty} /> : null}
          {!canWrite ? null : s.status === 'published' ? (
            <Button onClick={() => setConfirm('unpublish')} disabled={dirty}>
              {t('stories.unpublish')}
            </Button>
          ) : null}
          {canWrite ? (
            <Button tone="primary" onClick={() => setConfirm('publish')} disabled={dirty || s.status === 'archived' || state === 'published'}>
              {t('stories.publish')}
            </Button>
          ) : null}
          {canWrite && s.status !== 'archived' && !s.is_folder ? (
            <Button tone="danger" onClick={() => setConfirm('archive')} disabled={dirty}>
              {t('editor.archive')}
            </Button>
          ) : null}
          {canDelete ? (
            <Button tone="danger" onClick={() => setDeleting({ uuid, name: s.name })} disabled={dirty}>
              {t('stories.delete')}
            </Button>
          ) : null}
        </div>
      </div>

      {canWrite ? null : (
        <p className="text-sm text-slate-700" data-testid="read-only">
          {t('editor.readOnly')}
        </p>
      )}
      <div aria-live="polite" className="text-sm text-emerald-800">
        {notice}
      </div>
      <Announcer />
      {remote !== null ? (
        <p role="status" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900 ring-1 ring-amber-200" data-testid="remote-version">
          {t('editor.remote', { version: remote })}
        </p>
      ) : null}
      <ErrorNotice error={failure} />
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

      {!showForm ? (
        <>
          <EmptyState title={t('editor.noTranslation', { lang: lang ?? '' })}>
            <p>
              {t('editor.fallbackText', {
                lang: lang ?? '',
                from: fallbackFrom ?? s.primary_lang,
                chain: lang && localeList.data ? `: ${localeChain(lang, localeList.data, s.primary_lang).join(' → ')}` : '',
                primary: s.primary_lang,
              })}
            </p>
            {canWrite ? (
              <Button tone="primary" className="mt-3" onClick={startTranslation} disabled={!startFrom}>
                {t('editor.startFrom', { from: fallbackFrom ?? s.primary_lang })}
              </Button>
            ) : null}
          </EmptyState>
          {fallbackSource && fallbackFrom ? (
            <section aria-label={t('editor.shownFrom', { from: fallbackFrom })} className="rounded-lg bg-slate-100 p-3" data-testid="fallback-preview">
              <p className="mb-2 text-sm text-slate-700">{t('editor.readersGet', { lang: lang ?? '' })}</p>
              <TranslationContext.Provider value={translationValue}>
                <FallbackContext.Provider value={fallbackValue}>
                  <fieldset disabled className="contents">
                    <BlockList path="blocks" blocks={asDoc(fallbackSource.content).blocks} onChange={() => {}} allowed={roots} blueprints={blueprints} errors={NO_ERRORS} />
                  </fieldset>
                </FallbackContext.Provider>
              </TranslationContext.Provider>
            </section>
          ) : null}
        </>
      ) : roots.length === 0 && (doc?.blocks.length ?? 0) === 0 ? (
        <EmptyState title={t('editor.noComponent')}>
          {t('editor.noComponentText')}{' '}
          <Link to="/spaces/$space/components" params={{ space }} className="font-medium text-indigo-800 underline">
            {t('nav.components')}
          </Link>
        </EmptyState>
      ) : (
        <div className="grid items-start gap-4 lg:grid-cols-[minmax(0,1fr)_18rem]">
          <section
            aria-label={t('editor.content')}
            className="rounded-lg bg-slate-100 p-3"
            onFocus={(e) => {
              // Tell the others which block (and field) has this editor's focus.
              // The innermost of the field and the block around the focused element (a block's header sits inside
              // the blocks field that holds it).
              const el = e.target as HTMLElement
              const field = el.closest('[data-field-path]')
              const block = el.closest('[data-block-path]')
              const path = field && (!block || block.contains(field)) ? field.getAttribute('data-field-path') : block?.getAttribute('data-block-path')
              if (!path) return
              let anchor = 0
              let head = 0
              try {
                const input = el as HTMLInputElement
                anchor = input.selectionStart ?? 0
                head = input.selectionEnd ?? anchor
              } catch {}
              presence.setFocus(path.length > 256 ? blockOfPath(path).slice(0, 256) : path, anchor, head)
            }}
          >
            <CollabContext.Provider value={collab}>
              <TranslationContext.Provider value={translationValue}>
                {/* A role that cannot write reads the form: every control in it disabled. */}
                <fieldset disabled={!canWrite} className="contents">
                  <BlockList path="blocks" blocks={doc?.blocks ?? []} onChange={onBlocks} allowed={roots} blueprints={blueprints} errors={errors} />
                </fieldset>
              </TranslationContext.Provider>
            </CollabContext.Provider>
          </section>
          <CommentsPanel space={space} uuid={uuid} live={live} target={commentTarget} onTarget={setCommentTarget} savedPath={savedPath} />
        </div>
      )}

      {!s.is_folder && s.status !== 'archived' ? <SchedulePanel space={space} uuid={uuid} canWrite={canWrite} disabled={false} /> : null}
      {!s.is_folder ? <StoryAnalyticsPanel space={space} uuid={uuid} /> : null}
      {showForm ? (
        <VersionsPanel space={space} uuid={uuid} current={s.version_no} lang={lang ?? s.primary_lang} disabled={dirty || s.status === 'archived'} readOnly={!canWrite} onRestored={reload} />
      ) : null}

      <Dialog open={conflict !== null} title={t('editor.conflict')} onClose={() => setConflict(null)}>
        <p className="text-sm">
          {t('editor.conflictText', { base: baseVersion ?? '', theirs: conflict?.theirs || t('editor.newer') })}
        </p>
        <h3 className="text-sm font-semibold">{t('editor.theyChanged')}</h3>
        <ChangeList changes={conflict?.changes ?? []} label={t('editor.theirChanges')} limit={50} />
        <div className="flex justify-end gap-2">
          <Button onClick={reload}>{t('editor.reloadTheirs')}</Button>
          <Button tone="danger" onClick={() => save(true)}>
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

      <Dialog open={confirm !== null} title={t(`editor.confirm.${confirm ?? 'publish'}`, { name: s.name })} onClose={() => setConfirm(null)}>
        <p className="text-sm">
          {confirm === 'publish'
            ? t('editor.confirm.publishText', { version: s.version_no, url: publicUrl(space, s.full_path) })
            : confirm === 'unpublish'
              ? t('editor.confirm.unpublishText')
              : t('editor.confirm.archiveText')}
        </p>
        <div className="flex justify-end gap-2">
          <Button onClick={() => setConfirm(null)}>{t('common.cancel')}</Button>
          <Button tone={confirm === 'archive' ? 'danger' : 'primary'} onClick={() => confirm && publishing(confirm)}>
            {t(CONFIRM_VERB[confirm ?? 'publish'])}
          </Button>
        </div>
      </Dialog>

      <DeleteStoryDialog
        space={space}
        target={deleting}
        leaving
        onClose={() => setDeleting(null)}
        onDeleted={async (name) => {
          setDeleting(null)
          toast(t('stories.deleted', { name }))
          await navigate({ to: '/spaces/$space', params: { space }, search: {} })
        }}
      />
    </div>
  )
}
