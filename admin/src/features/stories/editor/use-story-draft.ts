import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useBlocker } from '@tanstack/react-router'
import { useCallback, useEffect, useRef, useState } from 'react'
import { ApiFailure, api, unwrap } from '../../../api/client'
import { queryKeys } from '../../../api/keys'
import { storyQuery } from '../../../api/queries'
import { type Change, diffStories } from '../../../components/doc-diff'
import type { Block } from '../../../fields/types'
import { t } from '../../../i18n'
import { asDoc, type Doc } from './doc'

/** What the toolbar's confirmed actions call (POST .../{action}). */
export type StoryAction = 'publish' | 'unpublish' | 'archive'

/**
 * The Story being edited, as a draft: it loads the Story in the locale on screen (and in its own locale, where a
 * translation starts from), holds the edited document and whether it is dirty, saves it (Ctrl/⌘+S too) against the
 * version the edits started from, and on a 409 holds the conflict (what the newer version changed). Leaving with
 * unsaved edits is blocked until confirmed (`leaving`). Publish, unpublish and archive go through `act`.
 */
export function useStoryDraft(space: string, uuid: string, lang: string | undefined) {
  const queryClient = useQueryClient()
  const story = useQuery(storyQuery(space, uuid, lang))
  // The Story in its own locale: the header while a translation is started, and what a new translation starts from.
  const primary = useQuery({ ...storyQuery(space, uuid), enabled: lang !== undefined })
  const missing = story.error instanceof ApiFailure && story.error.body.error === 'translation_not_found'
  const [startedIn, setStartedIn] = useState<string | null>(null)

  const [doc, setDoc] = useState<Doc | null>(null)
  const [baseVersion, setBaseVersion] = useState<number | null>(null)
  const [dirty, setDirty] = useState(false)
  const [errors, setErrors] = useState<Record<string, string[]>>({})
  const [failure, setFailure] = useState<unknown>(null)
  const [saving, setSaving] = useState(false)
  const [notice, setNotice] = useState<string | null>(null)
  // A 409: the version saved meanwhile, and what it changed against the version these edits started from.
  const [conflict, setConflict] = useState<null | { theirs: number; changes: Change[] }>(null)
  // The document and name the current edits started from (what "their changes" are measured against).
  const base = useRef<{ doc: Doc | null; name: string }>({ doc: null, name: '' })
  const baseVersionRef = useRef(baseVersion)
  baseVersionRef.current = baseVersion
  const savingRef = useRef(false)
  const dirtyRef = useRef(dirty)
  dirtyRef.current = dirty
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

  const onBlocks = useCallback((blocks: Block[]) => {
    setDoc({ type: 'doc', blocks })
    setDirty(true)
    setNotice(null)
  }, [])

  /** The live stream announced version `n`: reload when nothing is unsaved, else say a newer version exists. */
  const onRemoteVersion = useCallback(
    (n: unknown) => {
      if (typeof n !== 'number' || savingRef.current || (baseVersionRef.current !== null && n <= baseVersionRef.current)) return
      if (dirtyRef.current) setRemote(n)
      else void queryClient.invalidateQueries({ queryKey: queryKeys.story(space, uuid) })
    },
    [queryClient, space, uuid],
  )

  const refresh = () => queryClient.invalidateQueries({ queryKey: queryKeys.space(space) })

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

  /** Drop the edits and take the Story as it is now (after a conflict, a restore). */
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

  /** Publish, unpublish or archive the saved Story (the toolbar asks first). */
  const act = async (action: StoryAction) => {
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

  /** Start the missing translation of the locale on screen from `from` (a fallback locale's or the own content). */
  const startTranslation = (from: { content?: unknown; name: string } | undefined) => {
    const d = asDoc(from?.content)
    setDoc(d)
    base.current = { doc: d, name: from?.name ?? '' }
    setBaseVersion(primary.data?.version_no ?? null)
    setStartedIn(lang ?? null)
    setDirty(true)
  }

  return {
    story,
    primary,
    /** The Story has no translation in the locale on screen (yet). */
    missing,
    /** The form is shown: the translation exists, or was started here. */
    showForm: !missing || startedIn === lang,
    doc,
    dirty,
    errors,
    failure,
    saving,
    notice,
    conflict,
    dismissConflict: () => setConflict(null),
    baseVersion,
    remote,
    onBlocks,
    onRemoteVersion,
    save,
    reload,
    act,
    startTranslation,
    leaving,
  }
}

export type StoryDraft = ReturnType<typeof useStoryDraft>
