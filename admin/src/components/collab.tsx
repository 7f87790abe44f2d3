import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { memo, useCallback, useEffect, useId, useMemo, useRef, useState } from 'react'
import { ApiFailure, api, unwrap } from '../api/client'
import { spacesQuery } from '../api/queries'
import { meQuery } from '../features/account/queries'
import { useCan } from '../api/roles'
import { getToken } from '../auth'
import { Avatar, CommentIcon, type Person } from './block-editor'
import { Button, Dialog, ErrorNotice } from './ui'
import { formatDateTime, t } from '../i18n'
import { queryKeys } from '../api/keys'

type Comment = {
  id: number
  block_path: string
  block_uid: string
  body: string | null
  parent_id: number | null
  resolved: boolean
  author: { id: number; name: string }
  created_at: string
  edited: boolean
  orphaned: boolean
  deleted: boolean
}
export type PresenceSession = { session_id: string; user_id: number; user_name: string; block_path: string; selection: { anchor: number; head: number } }

const RETRY_MIN_MS = 3000
const RETRY_MAX_MS = 30_000

/**
 * The Story's live stream (`GET .../live`, Server-Sent Events) read with fetch, so the bearer token goes in the
 * Authorization header as on every other call (EventSource cannot send one). The server ends every stream after a
 * while (`closing` with reason `lifetime`) and at shutdown: it reconnects after the server's `retry` (growing to 30 s
 * while it keeps failing, or as a 429's Retry-After says); `onEvent('open')` after every (re)connect, so callers
 * refresh what they may have missed. It stops for good when access ended (`closing` with reason `access_ended`, or a
 * 401, 403 or 404 answer). `connected` is false while the stream is down: callers poll then.
 */
export function useLiveStream(space: string, uuid: string, onEvent: (event: string, data: unknown) => void) {
  const [connected, setConnected] = useState(false)
  const handler = useRef(onEvent)
  handler.current = onEvent
  useEffect(() => {
    let stopped = false
    let ctrl: AbortController | null = null
    let timer: ReturnType<typeof setTimeout> | undefined
    let retry = RETRY_MIN_MS
    let failures = 0
    let accessEnded = false
    const connect = async () => {
      let wait = 0
      ctrl = new AbortController()
      try {
        const token = getToken()
        const res = await fetch(`/v1/spaces/${encodeURIComponent(space)}/stories/${encodeURIComponent(uuid)}/live`, {
          headers: { Accept: 'text/event-stream', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
          signal: ctrl.signal,
          cache: 'no-store',
        })
        if (res.status === 401 || res.status === 403 || res.status === 404) accessEnded = true
        const after = Number(res.headers.get('retry-after'))
        if (res.status === 429 && after > 0) wait = after * 1000
        if (!res.ok || !res.body) throw new Error(`live stream: ${res.status}`)
        failures = 0
        setConnected(true)
        handler.current('open', null)
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
        let buf = ''
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          buf += value.replace(/\r\n?/g, '\n')
          for (let end = buf.indexOf('\n\n'); end !== -1; end = buf.indexOf('\n\n')) {
            const chunk = buf.slice(0, end)
            buf = buf.slice(end + 2)
            let event = 'message'
            const data: string[] = []
            for (const line of chunk.split('\n')) {
              if (line.startsWith(':')) continue
              const colon = line.indexOf(':')
              const field = colon === -1 ? line : line.slice(0, colon)
              const val = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
              if (field === 'event') event = val
              else if (field === 'data') data.push(val)
              else if (field === 'retry' && /^\d+$/.test(val)) retry = Math.max(RETRY_MIN_MS, Number(val))
            }
            if (!data.length) continue
            let parsed: unknown = null
            try {
              parsed = JSON.parse(data.join('\n'))
            } catch {
              parsed = data.join('\n')
            }
            if (event === 'closing' && (parsed as { reason?: unknown } | null)?.reason === 'access_ended') accessEnded = true
            handler.current(event, parsed)
          }
        }
      } catch {
        failures++
      }
      setConnected(false)
      if (!stopped && !accessEnded) timer = setTimeout(connect, Math.max(wait, Math.min(RETRY_MAX_MS, retry * 2 ** Math.max(0, failures - 1))))
    }
    void connect()
    return () => {
      stopped = true
      clearTimeout(timer)
      ctrl?.abort()
    }
  }, [space, uuid])
  return connected
}

/** The block a presence path points into: `blocks/3/body/0/headline` → `blocks/3/body/0`. */
export function blockOfPath(path: string): string {
  const parts = path.split('/')
  while (parts.length > 1 && !/^\d+$/.test(parts[parts.length - 1])) parts.pop()
  return parts.join('/')
}

const HEARTBEAT_MS = 15_000
const FOCUS_DEBOUNCE_MS = 200

/**
 * This editor's presence session: a heartbeat every 15 s and soon after the focused block changes (its path and the
 * caret of the focused input), ended when the editor closes. `others` are the other active sessions, from the
 * heartbeat's answer and refreshed by `refresh()` (on a live `presence` event).
 */
export function usePresence(space: string, uuid: string) {
  const sessionId = useMemo(() => crypto.randomUUID(), [])
  const [others, setOthersState] = useState<PresenceSession[]>([])
  // A beat that changes nothing (same sessions on the same blocks) keeps the old array: the editor does not re-render.
  const seen = useRef('')
  const setOthers = useCallback((next: PresenceSession[]) => {
    const key = next.map((o) => `${o.session_id}\u0000${o.block_path}\u0000${o.user_name}`).join('\u0001')
    if (key === seen.current) return
    seen.current = key
    setOthersState(next)
  }, [])
  const focus = useRef({ path: 'blocks/0', anchor: 0, head: 0 })
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)

  const beat = useCallback(async () => {
    try {
      const { data } = await unwrap(
        api.POST('/v1/spaces/{space}/stories/{uuid}/presence', {
          params: { path: { space, uuid } },
          body: { session_id: sessionId, block_path: focus.current.path, selection: { anchor: focus.current.anchor, head: focus.current.head } },
        }),
      )
      setOthers(data.active)
    } catch {
      // Presence is a courtesy: a failed beat is retried with the next one.
    }
  }, [space, uuid, sessionId, setOthers])

  const refresh = useCallback(async () => {
    try {
      const { data } = await unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}/presence', { params: { path: { space, uuid } } }))
      setOthers(data.filter((s) => s.session_id !== sessionId))
    } catch {}
  }, [space, uuid, sessionId, setOthers])

  useEffect(() => {
    void beat()
    const timer = setInterval(beat, HEARTBEAT_MS)
    const leave = () => {
      const token = getToken()
      // keepalive: the request outlives the page when the tab closes.
      void fetch(`/v1/spaces/${encodeURIComponent(space)}/stories/${encodeURIComponent(uuid)}/presence/${sessionId}`, {
        method: 'DELETE',
        keepalive: true,
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      }).catch(() => {})
    }
    window.addEventListener('pagehide', leave)
    return () => {
      clearInterval(timer)
      clearTimeout(pending.current)
      window.removeEventListener('pagehide', leave)
      leave()
    }
  }, [beat, space, uuid, sessionId])

  /** The editor's focus moved (a field's path, and the caret in it). A new block is told at once (debounced). */
  const setFocus = useCallback(
    (path: string, anchor = 0, head = anchor) => {
      const moved = path !== focus.current.path
      focus.current = { path, anchor, head }
      if (!moved) return
      clearTimeout(pending.current)
      pending.current = setTimeout(() => void beat(), FOCUS_DEBOUNCE_MS)
    },
    [beat],
  )

  return { sessionId, others, refresh, setFocus }
}

/** The other editors, once each (a person with two tabs open shows once), as avatars with their names. */
export function PresenceBar({ others }: { others: PresenceSession[] }) {
  const people = new Map<number, Person>()
  for (const s of others) if (!people.has(s.user_id)) people.set(s.user_id, { sessionId: s.session_id, userId: s.user_id, name: s.user_name })
  if (!people.size) return null
  const names = [...people.values()].map((p) => p.name)
  return (
    <div className="flex items-center gap-1" role="group" aria-label={t('comments.alsoEditing', { names: names.join(', ') })} data-testid="presence-bar">
      {[...people.values()].map((p) => (
        <Avatar key={p.userId} person={p} />
      ))}
    </div>
  )
}

/** Every comment of the Story (resolved threads too: the panel filters), polled only while the live stream is down. */
export function useComments(space: string, uuid: string, live: boolean) {
  return useQuery({
    queryKey: queryKeys.comments(space, uuid),
    queryFn: async () =>
      (await unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}/comments', { params: { path: { space, uuid }, query: { include_resolved: '1' } } })))
        .data as Comment[],
    refetchInterval: live ? false : 10_000,
  })
}

export const invalidateComments = (qc: ReturnType<typeof useQueryClient>, space: string, uuid: string) =>
  qc.invalidateQueries({ queryKey: queryKeys.comments(space, uuid) })

/** Comments per block uid: open threads (a deleted root does not count, its replies do). */
export function commentCounts(comments: Comment[] | undefined): Map<string, number> {
  const counts = new Map<string, number>()
  if (!comments) return counts
  const open = new Set(comments.filter((c) => c.parent_id === null && !c.resolved).map((c) => c.id))
  for (const c of comments) {
    const root = c.parent_id ?? c.id
    if (!open.has(root) || c.deleted) continue
    counts.set(c.block_uid, (counts.get(c.block_uid) ?? 0) + 1)
  }
  return counts
}

export interface CommentTarget {
  uid: string
  path: string
  title: string
}

const when = (iso: string) => formatDateTime(iso)

/**
 * The comments panel: threads anchored to blocks, newest activity last; a block's own threads when one is chosen
 * (its comment button), with a form for a new thread on it; replies and resolve on each thread.
 */
export const CommentsPanel = memo(function CommentsPanel({
  space,
  uuid,
  live,
  target,
  onTarget,
  savedPath,
}: {
  space: string
  uuid: string
  live: boolean
  target: CommentTarget | null
  onTarget: (t: CommentTarget | null) => void
  /** The block's path in the saved draft (comments anchor there); undefined for a block that is not saved yet. */
  savedPath: (uid: string) => string | undefined
}) {
  const qc = useQueryClient()
  const comments = useComments(space, uuid, live)
  const [showResolved, setShowResolved] = useState(false)
  const [draft, setDraft] = useState('')
  const newId = useId()
  const resolvedId = useId()
  const headingRef = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    if (target) headingRef.current?.focus()
  }, [target])

  const create = useMutation({
    mutationFn: (body: { block_path?: string; body: string; parent_id?: number }) =>
      unwrap(api.POST('/v1/spaces/{space}/stories/{uuid}/comments', { params: { path: { space, uuid } }, body })),
    onSuccess: () => invalidateComments(qc, space, uuid),
  })
  // Who may delete what: editors their own comments, admins any.
  const me = useQuery({ ...meQuery(), staleTime: 5 * 60_000 })
  const spaces = useQuery(spacesQuery())
  const role = spaces.data?.find((x) => x.slug === space)?.role
  const canDelete = (c: Comment) => !c.deleted && (role === 'admin' || (me.data?.id != null && c.author.id === me.data.id))
  // Commenting needs the operation's minimum role (a viewer reads the threads only).
  const canComment = useCan(space, 'POST', '/v1/spaces/{space}/stories/{uuid}/comments')
  const [deleting, setDeleting] = useState<Comment | null>(null)
  const remove = useMutation({
    mutationFn: (id: number) => unwrap(api.DELETE('/v1/spaces/{space}/stories/{uuid}/comments/{id}', { params: { path: { space, uuid, id } } })),
    onSuccess: () => {
      setDeleting(null)
      return invalidateComments(qc, space, uuid)
    },
  })
  const resolve = useMutation({
    mutationFn: (id: number) => unwrap(api.POST('/v1/spaces/{space}/stories/{uuid}/comments/{id}/resolve', { params: { path: { space, uuid, id } } })),
    onSuccess: () => invalidateComments(qc, space, uuid),
  })

  const all = comments.data ?? []
  const roots = all.filter((c) => c.parent_id === null && (showResolved || !c.resolved) && (!target || c.block_uid === target.uid))
  const replies = new Map<number, Comment[]>()
  for (const c of all) if (c.parent_id !== null) replies.set(c.parent_id, [...(replies.get(c.parent_id) ?? []), c])
  const anchorPath = target ? savedPath(target.uid) : undefined

  return (
    <aside aria-labelledby={`${newId}-h`} className="flex flex-col gap-3 rounded-lg bg-white p-3 ring-1 ring-slate-200" data-testid="comments-panel">
      <div className="flex items-center gap-2">
        <h2 id={`${newId}-h`} ref={headingRef} tabIndex={-1} className="flex-1 text-sm font-semibold">
          {target ? t('comments.on', { title: target.title }) : t('comments.title')}
        </h2>
        <span className="text-xs text-slate-600" title={live ? t('comments.liveTitle') : t('comments.offlineTitle')}>
          {live ? t('comments.live') : t('comments.offline')}
        </span>
      </div>
      {target ? (
        <div className="flex items-center gap-2 text-xs">
          <code>{target.path}</code>
          <Button className="ml-auto px-2 py-0.5 text-xs" onClick={() => onTarget(null)}>
            {t('comments.all')}
          </Button>
        </div>
      ) : (
        <p className="text-xs text-slate-600">
          {t('comments.useBefore')} <CommentIcon /> {t('comments.useAfter')}
        </p>
      )}
      <label className="flex items-center gap-1 text-xs" htmlFor={resolvedId}>
        <input id={resolvedId} type="checkbox" checked={showResolved} onChange={(e) => setShowResolved(e.target.checked)} />
        {t('comments.showResolved')}
      </label>
      <ErrorNotice error={comments.error ?? resolve.error ?? remove.error} />

      {target && canComment ? (
        <form
          className="flex flex-col gap-1"
          onSubmit={(e) => {
            e.preventDefault()
            if (!anchorPath || !draft.trim()) return
            create.mutate({ block_path: anchorPath, body: draft }, { onSuccess: () => setDraft('') })
          }}
        >
          <label htmlFor={newId} className="text-xs font-medium">
            {t('comments.newOn', { title: target.title })}
          </label>
          <textarea
            id={newId}
            rows={3}
            value={draft}
            maxLength={10_000}
            onChange={(e) => setDraft(e.target.value)}
            className="rounded-md border border-slate-300 px-2 py-1 text-sm"
          />
          {anchorPath === undefined ? <p className="text-xs text-amber-900">{t('comments.notSaved')}</p> : null}
          <ErrorNotice error={create.error instanceof ApiFailure && create.error.body.errors ? new Error(Object.values(create.error.body.errors).flat().join('; ')) : create.error} />
          <Button type="submit" tone="primary" className="self-end" disabled={create.isPending || !anchorPath || !draft.trim()}>
            {t('comments.submit')}
          </Button>
        </form>
      ) : null}

      {comments.isPending ? <p className="text-xs text-slate-600">{t('comments.loading')}</p> : null}
      {!comments.isPending && roots.length === 0 ? <p className="text-sm text-slate-700">{t(`comments.none${showResolved ? '' : 'Open'}${target ? 'Block' : ''}`)}</p> : null}
      <ol className="flex flex-col gap-3" aria-label={t('comments.threads')}>
        {roots.map((c) => (
          <Thread
            key={c.id}
            root={c}
            replies={replies.get(c.id) ?? []}
            onReply={(body, done) => create.mutate({ parent_id: c.id, body }, { onSuccess: done })}
            onResolve={() => resolve.mutate(c.id)}
            canDelete={canDelete}
            canComment={canComment}
            onDelete={setDeleting}
            onShow={() => {
              document.querySelector<HTMLElement>(`[data-block-handle="${CSS.escape(c.block_uid)}"]`)?.focus()
            }}
            busy={create.isPending || resolve.isPending}
          />
        ))}
      </ol>
      <Dialog open={deleting !== null} title={t('comments.deleteTitle')} onClose={() => setDeleting(null)}>
        <p className="text-sm">
          {deleting?.parent_id === null
            ? t('comments.deleteRoot')
            : t('comments.deleteReply')}
        </p>
        <div className="flex justify-end gap-2">
          <Button onClick={() => setDeleting(null)}>{t('common.cancel')}</Button>
          <Button tone="danger" disabled={remove.isPending} onClick={() => deleting && remove.mutate(deleting.id)}>
            {t('comments.delete')}
          </Button>
        </div>
      </Dialog>
    </aside>
  )
})

function Thread({
  root,
  replies,
  onReply,
  onResolve,
  onShow,
  busy,
  canDelete,
  canComment,
  onDelete,
}: {
  canComment: boolean
  root: Comment
  replies: Comment[]
  onReply: (body: string, done: () => void) => void
  onResolve: () => void
  onShow: () => void
  busy: boolean
  canDelete: (c: Comment) => boolean
  onDelete: (c: Comment) => void
}) {
  const [replying, setReplying] = useState(false)
  const [text, setText] = useState('')
  const id = useId()
  return (
    <li className={`rounded-md p-2 text-sm ring-1 ${root.resolved ? 'bg-slate-50 ring-slate-200' : 'bg-amber-50/40 ring-amber-200'}`} data-comment-id={root.id}>
      <div className="flex flex-wrap items-center gap-1 text-xs text-slate-700">
        <button type="button" className="font-mono text-indigo-800 underline" onClick={onShow} aria-label={t('comments.goToBlock', { path: root.block_path })}>
          {root.block_path}
        </button>
        {root.orphaned ? <span className="rounded bg-slate-200 px-1">{t('comments.blockRemoved')}</span> : null}
        {root.resolved ? <span className="rounded bg-emerald-100 px-1 text-emerald-900">{t('comments.resolved')}</span> : null}
      </div>
      <CommentBody c={root} canDelete={canDelete(root)} onDelete={() => onDelete(root)} />
      {replies.length ? (
        <ol className="mt-2 flex flex-col gap-2 border-l-2 border-slate-200 pl-2" aria-label={t('comments.replies')}>
          {replies.map((r) => (
            <li key={r.id} data-comment-id={r.id}>
              <CommentBody c={r} canDelete={canDelete(r)} onDelete={() => onDelete(r)} />
            </li>
          ))}
        </ol>
      ) : null}
      <div className={canComment ? 'mt-2 flex gap-2' : 'hidden'}>
        <Button className="px-2 py-0.5 text-xs" onClick={() => setReplying((x) => !x)} aria-expanded={replying}>
          {t('comments.reply')}
        </Button>
        <Button className="px-2 py-0.5 text-xs" onClick={onResolve} disabled={busy}>
          {root.resolved ? t('comments.reopen') : t('comments.resolve')}
        </Button>
      </div>
      {replying ? (
        <form
          className="mt-2 flex flex-col gap-1"
          onSubmit={(e) => {
            e.preventDefault()
            if (!text.trim()) return
            onReply(text, () => {
              setText('')
              setReplying(false)
            })
          }}
        >
          <label htmlFor={id} className="text-xs font-medium">
            {t('comments.replyTo', { name: root.author.name })}
          </label>
          <textarea id={id} rows={2} value={text} maxLength={10_000} onChange={(e) => setText(e.target.value)} className="rounded-md border border-slate-300 px-2 py-1 text-sm" />
          <Button type="submit" tone="primary" className="self-end px-2 py-0.5 text-xs" disabled={busy || !text.trim()}>
            {t('comments.sendReply')}
          </Button>
        </form>
      ) : null}
    </li>
  )
}

function CommentBody({ c, canDelete, onDelete }: { c: Comment; canDelete: boolean; onDelete: () => void }) {
  return (
    <div className="mt-1">
      <p className="flex items-center gap-1 text-xs text-slate-600">
        <span className="font-medium text-slate-800">{c.author.name}</span> · {when(c.created_at)}
        {c.edited ? t('comments.edited') : ''}
        {canDelete ? (
          <button type="button" className="ml-auto text-red-800 underline" onClick={onDelete} aria-label={t('comments.deleteBy', { name: c.author.name })}>
            {t('comments.delete')}
          </button>
        ) : null}
      </p>
      {/* Verbatim, as text: markup in a comment stays markup. */}
      <p className="whitespace-pre-wrap break-words">{c.deleted ? <em className="text-slate-600">{t('comments.deleted')}</em> : c.body}</p>
    </div>
  )
}
