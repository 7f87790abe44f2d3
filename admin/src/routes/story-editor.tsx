import { useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi, Link, useBlocker } from '@tanstack/react-router'
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { ApiFailure, api, unwrap } from '../api/client'
import { componentsQuery, spacesQuery, storyQuery } from '../api/queries'
import { BlockList, TranslationContext } from '../components/block-editor'
import { PreviewButton } from '../components/preview-button'
import { VersionsPanel } from '../components/versions'
import { Button, Dialog, EmptyState, ErrorNotice, Loading, StatusBadge, storyState } from '../components/ui'
import type { Block, Blueprint } from '../fields/types'

const route = getRouteApi('/app/spaces/$space/stories/$uuid')

interface Doc {
  type: 'doc'
  blocks: Block[]
}

const asDoc = (content: unknown): Doc => {
  const c = content as Partial<Doc> | null | undefined
  return { type: 'doc', blocks: Array.isArray(c?.blocks) ? (c.blocks as Block[]) : [] }
}

const CONFIRM_VERB = { publish: 'Publish', unpublish: 'Unpublish', archive: 'Archive' } as const

/** The public (CDN) URL of a published Story. */
export const publicUrl = (space: string, fullPath: string) => `${location.origin}/v1/cdn/${encodeURIComponent(space)}/stories${fullPath}`

export function StoryEditorScreen() {
  const { space, uuid } = route.useParams()
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
  const [conflict, setConflict] = useState(false)
  const [confirm, setConfirm] = useState<null | 'publish' | 'unpublish' | 'archive'>(null)

  // Take the server's document when it arrives (first load, reload), not while the editor holds unsaved changes.
  useEffect(() => {
    if (story.data && (!dirty || baseVersion === null)) {
      setDoc(asDoc(story.data.content))
      setBaseVersion(story.data.version_no)
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [story.data])

  const refresh = () => queryClient.invalidateQueries({ queryKey: ['/v1/spaces', space] })

  const save = useCallback(
    async (overwrite = false) => {
      const current = story.data ?? primary.data
      if (!doc || !current) return
      setSaving(true)
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
        setConflict(false)
        setBaseVersion(data.version_no)
        setStartedIn(null)
        queryClient.setQueryData(storyQuery(space, uuid, lang).queryKey, data)
        setNotice(`Saved (version ${data.version_no}).`)
        await refresh()
      } catch (err) {
        if (err instanceof ApiFailure && err.status === 422 && err.body.errors) {
          setErrors(err.body.errors)
          setFailure(new Error(`Not saved: ${Object.keys(err.body.errors).length} field(s) need attention.`))
        } else if (err instanceof ApiFailure && err.status === 409 && err.body.error === 'version_conflict') {
          setConflict(true)
        } else setFailure(err)
      } finally {
        setSaving(false)
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
  const dirtyRef = useRef(dirty)
  dirtyRef.current = dirty
  const leaving = useBlocker({ shouldBlockFn: () => dirtyRef.current, enableBeforeUnload: () => dirtyRef.current, withResolver: true })

  const reload = async () => {
    setDirty(false)
    setConflict(false)
    setErrors({})
    const fresh = await queryClient.fetchQuery({ ...storyQuery(space, uuid, lang), staleTime: 0 })
    setDoc(asDoc(fresh.content))
    setBaseVersion(fresh.version_no)
  }

  const publishing = async (action: 'publish' | 'unpublish' | 'archive') => {
    setConfirm(null)
    setFailure(null)
    try {
      const path = `/v1/spaces/{space}/stories/{uuid}/${action}` as const
      const { data } = await unwrap(api.POST(path, { params: { path: { space, uuid } } }))
      queryClient.setQueryData(storyQuery(space, uuid, lang).queryKey, (old) => (old ? { ...old, ...data, content: old.content } : old))
      setNotice(action === 'publish' ? 'Published.' : action === 'unpublish' ? 'Unpublished: the Story is a draft again.' : 'Archived.')
      await refresh()
    } catch (err) {
      setFailure(err)
    }
  }

  if ((story.isPending && !missing) || components.isPending || (missing && primary.isPending)) return <Loading what="Loading the Story" />
  if (story.isError && !missing) return <ErrorNotice error={story.error} />
  if (primary.isError) return <ErrorNotice error={primary.error} />
  if (components.isError) return <ErrorNotice error={components.error} />
  const s = (story.data ?? primary.data)!
  const startTranslation = () => {
    setDoc(asDoc(primary.data?.content))
    setBaseVersion(primary.data?.version_no ?? null)
    setStartedIn(lang ?? null)
    setDirty(true)
  }
  const showForm = !missing || startedIn === lang
  const roots = [...blueprints.values()].filter((b) => b.is_root)
  const state = storyState(s)
  const problems = Object.entries(errors)

  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-center gap-3">
        <Link to="/spaces/$space" params={{ space }} search={{}} className="text-sm text-indigo-800 underline">
          ← Stories
        </Link>
        <h1 className="text-2xl font-semibold">{s.name}</h1>
        <StatusBadge state={state} />
        <span className="text-sm text-slate-600">
          {s.full_path} · version {s.version_no}
          {dirty ? ' · unsaved changes' : ''}
        </span>
        {locales.length > 1 ? (
          <label className="flex items-center gap-1 text-sm">
            Locale
            <select
              value={lang ?? s.primary_lang}
              onChange={(e) => navigate({ search: { lang: e.target.value === s.primary_lang ? undefined : e.target.value } })}
              className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm"
            >
              {locales.map((l) => (
                <option key={l} value={l}>
                  {l}
                  {l === s.primary_lang ? ' (own)' : s.translations.includes(l) ? '' : ' (no translation yet)'}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <div className="ml-auto flex gap-2">
          <Button tone="primary" onClick={() => save()} disabled={saving || !dirty} aria-keyshortcuts="Control+S">
            {saving ? 'Saving…' : 'Save'}
          </Button>
          {!s.is_folder ? <PreviewButton space={space} path={s.full_path} dirty={dirty} /> : null}
          {s.status === 'published' ? (
            <Button onClick={() => setConfirm('unpublish')} disabled={dirty}>
              Unpublish
            </Button>
          ) : null}
          <Button tone="primary" onClick={() => setConfirm('publish')} disabled={dirty || s.status === 'archived' || state === 'published'}>
            Publish
          </Button>
          {s.status !== 'archived' && !s.is_folder ? (
            <Button tone="danger" onClick={() => setConfirm('archive')} disabled={dirty}>
              Archive
            </Button>
          ) : null}
        </div>
      </div>

      <div aria-live="polite" className="text-sm text-emerald-800">
        {notice}
      </div>
      <ErrorNotice error={failure} />
      {problems.length ? (
        <section aria-label="Problems" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 ring-1 ring-red-200">
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
          Public URL:{' '}
          <a href={publicUrl(space, s.full_path)} className="text-indigo-800 underline" target="_blank" rel="noreferrer" data-testid="public-url">
            {publicUrl(space, s.full_path)}
          </a>
        </p>
      ) : null}

      {!showForm ? (
        <EmptyState title={`No “${lang}” translation yet`}>
          <p>
            Start it from the Story's own locale ({s.primary_lang}): its blocks are copied here for you to translate. Fields
            that are not translatable keep showing the {s.primary_lang} value.
          </p>
          <Button tone="primary" className="mt-3" onClick={startTranslation}>
            Start from {s.primary_lang}
          </Button>
        </EmptyState>
      ) : roots.length === 0 && (doc?.blocks.length ?? 0) === 0 ? (
        <EmptyState title="No component yet">
          The form of a Story is built from the Space's components. Create a top-level one (for example a “Page” with a title
          and a body of blocks) under{' '}
          <Link to="/spaces/$space/components" params={{ space }} className="font-medium text-indigo-800 underline">
            Components
          </Link>
          , then come back.
        </EmptyState>
      ) : (
        <section aria-label="Content" className="rounded-lg bg-slate-100 p-3">
          <TranslationContext.Provider value={lang && lang !== s.primary_lang ? { lang, primary: s.primary_lang } : null}>
          <BlockList
            path="blocks"
            blocks={doc?.blocks ?? []}
            onChange={(blocks) => {
              setDoc({ type: 'doc', blocks })
              setDirty(true)
              setNotice(null)
            }}
            allowed={roots}
            blueprints={blueprints}
            errors={errors}
          />
          </TranslationContext.Provider>
        </section>
      )}

      {showForm ? <VersionsPanel space={space} uuid={uuid} current={s.version_no} disabled={dirty || s.status === 'archived'} /> : null}

      <Dialog open={conflict} title="Someone saved this Story meanwhile" onClose={() => setConflict(false)}>
        <p className="text-sm">
          Your changes are based on version {baseVersion}, and a newer version was saved. Reload to see theirs (your changes are
          dropped), or overwrite theirs with yours.
        </p>
        <div className="flex justify-end gap-2">
          <Button onClick={reload}>Reload theirs</Button>
          <Button tone="danger" onClick={() => save(true)}>
            Overwrite with mine
          </Button>
        </div>
      </Dialog>

      <Dialog open={leaving.status === 'blocked'} title="Leave without saving?" onClose={() => leaving.reset?.()}>
        <p className="text-sm">This Story has changes that are not saved. They are lost if you leave.</p>
        <div className="flex justify-end gap-2">
          <Button onClick={() => leaving.reset?.()}>Stay</Button>
          <Button tone="danger" onClick={() => leaving.proceed?.()}>
            Leave without saving
          </Button>
        </div>
      </Dialog>

      <Dialog open={confirm !== null} title={`${CONFIRM_VERB[confirm ?? 'publish']} “${s.name}”?`} onClose={() => setConfirm(null)}>
        <p className="text-sm">
          {confirm === 'publish'
            ? `The saved version ${s.version_no} becomes public at ${publicUrl(space, s.full_path)}.`
            : confirm === 'unpublish'
              ? 'The Story stops being public; its draft stays.'
              : 'The Story leaves the public site and can no longer be edited or published; afterwards it can only be deleted.'}
        </p>
        <div className="flex justify-end gap-2">
          <Button onClick={() => setConfirm(null)}>Cancel</Button>
          <Button tone={confirm === 'archive' ? 'danger' : 'primary'} onClick={() => confirm && publishing(confirm)}>
            {CONFIRM_VERB[confirm ?? 'publish']}
          </Button>
        </div>
      </Dialog>
    </div>
  )
}
