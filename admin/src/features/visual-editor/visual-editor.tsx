import { useNavigate } from '@tanstack/react-router'
import { type KeyboardEvent as ReactKeyboardEvent, type PointerEvent as ReactPointerEvent, useCallback, useEffect, useRef, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { Button, ErrorNotice } from '../../components/ui'
import { t } from './messages'
import { pathOfBlock, post, siteMessage } from './channel'

/**
 * The visual editor: the Story's page on the site, in a frame beside the form, changing as the editor types
 * (docs/in-page-editing.md, "The visual editor"). The Story editor mounts it with its unsaved state; it owns its
 * toggle, the frame, the preview token and the channel with `/service-admin.js` in the frame:
 * - every change of the document goes to the site as `draft` (~150 ms after the last keystroke); a site that renders
 *   on its server (`ready` with `reload`) gets a draft snapshot stored against the token and `refresh` (~800 ms);
 * - a save and a publish are `saved` and `published`; the field that has the focus is `focus`; the locale `locale`;
 * - the site's `select` scrolls to and focuses that field here; its `navigated` is shown (and a Story of the Space
 *   found at that path opens).
 * The admin's CSP allows framing only the Space's preview URL origin (src/modules/admin/routes.ts), and only for pages
 * loaded below `/admin/spaces/{space}/`: opened on a page loaded elsewhere, the app reloads itself once first.
 */

export interface VisualEditorProps {
  space: string
  story: { uuid: string; name: string; full_path: string; version_no: number; published_at?: string | null; is_folder?: boolean }
  /** The document being edited (unsaved changes included). */
  doc: unknown
  /** The locale being edited. */
  lang: string
  dirty: boolean
  /** The other editors of this Story and the block each is in (presence): outlined in the frame in their colour. */
  others?: { user_id: number; user_name: string; block_path: string }[]
}

const DEVICES = [
  { key: 'fit', width: null },
  { key: '390', width: 390 },
  { key: '768', width: 768 },
  { key: '1280', width: 1280 },
] as const
type Device = (typeof DEVICES)[number]['key']

const OPEN_KEY = 'content-service.visual-editor'
const DRAFT_MS = 150
const RELOAD_MS = 800
/** No `ready` this long after the frame loaded: the site does not talk to the editor (no bridge, or no framing). */
const READY_WAIT_MS = 6000

interface Session {
  expiresAt: number
  token: string
  tokenId: string
  url: string
  origin: string
}

/** Whether this document was loaded below the Space's pages (its CSP then names the Space's preview origin). */
function loadedForSpace(space: string): boolean {
  const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined
  const path = nav ? new URL(nav.name).pathname : location.pathname
  return path === `/admin/spaces/${space}` || path.startsWith(`/admin/spaces/${space}/`)
}

export function VisualEditor({ space, story, doc, lang, dirty, others }: VisualEditorProps) {
  const navigate = useNavigate()
  const [open, setOpen] = useState(() => {
    try {
      return sessionStorage.getItem(OPEN_KEY) === '1'
    } catch {
      return false
    }
  })
  const [session, setSession] = useState<Session | null>(null)
  const [noUrl, setNoUrl] = useState(false)
  const [failure, setFailure] = useState<unknown>(null)
  const [ready, setReady] = useState<{ reload: boolean; path: string } | null>(null)
  const [silent, setSilent] = useState(false)
  const [device, setDevice] = useState<Device>('fit')
  const [width, setWidth] = useState(() => Math.round(Math.min(900, Math.max(360, window.innerWidth * 0.45))))
  const [needsReload, setNeedsReload] = useState(false)
  const [renewals, setRenewals] = useState(0)
  const frame = useRef<HTMLIFrameElement>(null)

  const remember = (on: boolean) => {
    try {
      if (on) sessionStorage.setItem(OPEN_KEY, '1')
      else sessionStorage.removeItem(OPEN_KEY)
    } catch {}
  }

  // Opening: a fresh preview token for this Story's page (the CSP must name the site: reload once if it cannot).
  useEffect(() => {
    if (!open || story.is_folder) return
    if (!loadedForSpace(space)) {
      if (dirty) setNeedsReload(true)
      else location.reload()
      return
    }
    let live = true
    setSession(null)
    setReady(null)
    setSilent(false)
    setFailure(null)
    unwrap(api.POST('/v1/spaces/{space}/preview-tokens', { params: { path: { space } }, body: { path: story.full_path } }))
      .then(({ data }) => {
        if (!live) return
        if (!data.url) return setNoUrl(true)
        setNoUrl(false)
        setSession({ expiresAt: Date.parse(data.expires_at), token: data.token, tokenId: data.token.split('.')[0], url: data.url, origin: new URL(data.url).origin })
      })
      .catch((e) => live && setFailure(e))
    return () => {
      live = false
    }
    // A new token per Story and per opening, and before the last one expires (dirty only matters at the moment of opening).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open, space, story.uuid, story.full_path, renewals])

  // Tokens live an hour: a minute before this one ends, the frame reopens with a fresh one.
  useEffect(() => {
    if (!session) return
    const timer = setTimeout(() => setRenewals((n) => n + 1), Math.max(5_000, session.expiresAt - Date.now() - 60_000))
    return () => clearTimeout(timer)
  }, [session])

  // The form makes room for the frame: the page's main column stops short of it while it is open.
  const anchor = useRef<HTMLSpanElement>(null)
  useEffect(() => {
    const main = anchor.current?.closest('main') as HTMLElement | null
    if (!open || !main) return
    const before = { marginRight: main.style.marginRight, marginLeft: main.style.marginLeft, maxWidth: main.style.maxWidth }
    main.style.marginRight = `${width}px`
    main.style.marginLeft = '0'
    main.style.maxWidth = 'none'
    return () => {
      main.style.marginRight = before.marginRight
      main.style.marginLeft = before.marginLeft
      main.style.maxWidth = before.maxWidth
    }
  }, [open, width])

  const win = () => frame.current?.contentWindow
  const draftOf = useCallback(() => ({ uuid: story.uuid, name: story.name, full_path: story.full_path, lang, content: doc }), [story.uuid, story.name, story.full_path, lang, doc])

  // Site → admin.
  const docRef = useRef(doc)
  docRef.current = doc
  useEffect(() => {
    if (!session) return
    const onMessage = (e: MessageEvent) => {
      const m = siteMessage(e, win(), session.origin)
      if (!m) return
      if (m.type === 'ready' || m.type === 'navigated') {
        if (m.type === 'ready') setReady({ reload: m.reload, path: m.path })
        else setReady((r) => (r ? { ...r, path: m.path } : r))
        setSilent(false)
        // The site went to another page: the editor follows to the Story shown there (the leave dialog guards unsaved work).
        const storyPath = storyPathOf(session.url, story.full_path, m.path)
        if (storyPath && storyPath !== story.full_path) void follow(storyPath)
      } else if (m.type === 'select') {
        if (m.story_uuid !== story.uuid.toLowerCase()) {
          void navigate({ to: '/spaces/$space/stories/$uuid', params: { space, uuid: m.story_uuid }, search: {} })
          return
        }
        if (m.uid) focusField((docRef.current as { blocks?: unknown } | null)?.blocks, m.uid, m.field)
      }
    }
    /** The Story at a full path (its draft, read with the preview token), opened in the form. */
    const follow = async (path: string) => {
      try {
        const segs = path.split('/').filter(Boolean).map(encodeURIComponent)
        if (!segs.length) return
        const res = await fetch(`/v1/cdn/${encodeURIComponent(space)}/stories/${segs.join('/')}?version=draft`, {
          headers: { Authorization: `Bearer ${session.token}` },
          cache: 'no-store',
        })
        const found = res.ok ? ((await res.json()) as { data?: { uuid?: unknown } }).data?.uuid : null
        if (typeof found === 'string' && found !== story.uuid) void navigate({ to: '/spaces/$space/stories/$uuid', params: { space, uuid: found }, search: {} })
      } catch {}
    }
    window.addEventListener('message', onMessage)
    return () => window.removeEventListener('message', onMessage)
  }, [session, story.uuid, space, navigate])

  // A site that never says `ready`: no bridge on the page, or its CSP / X-Frame-Options forbid the frame.
  const [loads, setLoads] = useState(0)
  useEffect(() => {
    if (!session || ready || !loads) return
    const timer = setTimeout(() => setSilent(true), READY_WAIT_MS)
    return () => clearTimeout(timer)
  }, [session, ready, loads])

  // Admin → site: the unsaved Story (every tier), and for a reloading site a snapshot, then `refresh`.
  useEffect(() => {
    if (!session || !ready) return
    const timer = setTimeout(() => post(win(), session.origin, 'draft', { story: draftOf() }), DRAFT_MS)
    return () => clearTimeout(timer)
  }, [session, ready, draftOf])

  const snapshotted = useRef<unknown>(null)
  useEffect(() => {
    if (!session || !ready?.reload || !dirty || snapshotted.current === doc) return
    const timer = setTimeout(() => {
      const content = doc
      unwrap(
        api.PUT('/v1/spaces/{space}/preview-tokens/{token}/draft', {
          params: { path: { space, token: session.tokenId } },
          body: { story_uuid: story.uuid, lang, name: story.name, content },
        }),
      )
        .then(() => {
          snapshotted.current = content
          post(win(), session.origin, 'refresh')
        })
        .catch((e) => setFailure(e))
    }, RELOAD_MS)
    return () => clearTimeout(timer)
  }, [session, ready, dirty, doc, space, story.uuid, story.name, lang])

  // Saves and publishes refresh the site in every tier.
  const seen = useRef({ version: story.version_no, published: story.published_at ?? null })
  useEffect(() => {
    const before = seen.current
    seen.current = { version: story.version_no, published: story.published_at ?? null }
    if (!session || !ready) return
    if (story.published_at && story.published_at !== before.published) post(win(), session.origin, 'published')
    else if (story.version_no !== before.version) {
      // A reloading site reads the snapshot: it now holds the saved content.
      if (ready.reload) {
        void unwrap(
          api.PUT('/v1/spaces/{space}/preview-tokens/{token}/draft', {
            params: { path: { space, token: session.tokenId } },
            body: { story_uuid: story.uuid, lang, name: story.name, content: docRef.current },
          }),
        )
          .catch(() => {})
          .then(() => post(win(), session.origin, 'saved'))
      } else post(win(), session.origin, 'saved')
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [story.version_no, story.published_at])

  useEffect(() => {
    if (session && ready) post(win(), session.origin, 'locale', { lang })
  }, [session, ready, lang])

  // Presence: where the other editors are, by block `_uid`, each in a colour of their own.
  const presenceKey = JSON.stringify((others ?? []).map((o) => [o.user_id, o.user_name, o.block_path]))
  useEffect(() => {
    if (!session || !ready) return
    const people = (others ?? []).flatMap((o) => {
      const uid = uidAt(docRef.current, o.block_path)
      return uid ? [{ uid, name: o.user_name, color: colourOf(o.user_id) }] : []
    })
    post(win(), session.origin, 'presence', { people })
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [session, ready, presenceKey])

  // The field that has the form's focus is outlined in the frame.
  useEffect(() => {
    if (!session || !ready) return
    const onFocus = (e: FocusEvent) => {
      const el = e.target as HTMLElement | null
      const field = el?.closest?.('[data-field-path]')
      const block = field?.closest('[data-block-uid]')
      const blockPath = block?.getAttribute('data-block-path')
      const fieldPath = field?.getAttribute('data-field-path')
      if (!block || !blockPath || !fieldPath?.startsWith(`${blockPath}/`)) return
      post(win(), session.origin, 'focus', { uid: block.getAttribute('data-block-uid'), field: fieldPath.slice(blockPath.length + 1).split('/')[0] })
    }
    document.addEventListener('focusin', onFocus)
    return () => document.removeEventListener('focusin', onFocus)
  }, [session, ready])

  const close = () => {
    setOpen(false)
    remember(false)
    setSession(null)
    setReady(null)
    document.getElementById(`visual-toggle-${story.uuid}`)?.focus()
  }

  // The divider: drag it, or move it with the arrow keys.
  const drag = useRef<{ id: number; x: number; w: number } | null>(null)
  const clamp = (w: number) => Math.round(Math.min(window.innerWidth - 320, Math.max(320, w)))
  const onDown = (e: ReactPointerEvent<HTMLDivElement>) => {
    drag.current = { id: e.pointerId, x: e.clientX, w: width }
    e.currentTarget.setPointerCapture(e.pointerId)
  }
  const onMove = (e: ReactPointerEvent<HTMLDivElement>) => {
    const d = drag.current
    if (d && d.id === e.pointerId) setWidth(clamp(d.w + d.x - e.clientX))
  }
  const onKey = (e: ReactKeyboardEvent<HTMLDivElement>) => {
    if (e.key === 'ArrowLeft') setWidth((w) => clamp(w + 32))
    else if (e.key === 'ArrowRight') setWidth((w) => clamp(w - 32))
    else return
    e.preventDefault()
  }

  if (story.is_folder) return null
  const frameWidth = DEVICES.find((d) => d.key === device)?.width ?? null
  const adminOrigin = location.origin
  return (
    <>
      <span ref={anchor} hidden />
      <Button
        id={`visual-toggle-${story.uuid}`}
        aria-pressed={open}
        onClick={() => {
          const next = !open
          setOpen(next)
          remember(next)
        }}
        data-testid="visual-editor-toggle"
      >
        {t('visual.toggle')}
      </Button>
      {open ? (
        <section
          aria-label={t('visual.region')}
          className="fixed inset-y-0 right-0 z-40 flex border-l border-slate-300 bg-white shadow-xl"
          style={{ width }}
          data-testid="visual-editor"
        >
          <div
            role="separator"
            aria-orientation="vertical"
            aria-label={t('visual.resize')}
            aria-valuemin={320}
            aria-valuemax={Math.max(320, window.innerWidth - 320)}
            aria-valuenow={width}
            tabIndex={0}
            onPointerDown={onDown}
            onPointerMove={onMove}
            onPointerUp={() => (drag.current = null)}
            onKeyDown={onKey}
            className="w-2 shrink-0 cursor-col-resize bg-slate-200 hover:bg-indigo-300 focus:bg-indigo-400 focus:outline-none"
          />
          <div className="flex min-w-0 flex-1 flex-col">
            <div className="flex flex-wrap items-center gap-2 border-b border-slate-200 p-2">
              <div role="group" aria-label={t('visual.devices')} className="flex gap-1">
                {DEVICES.map((d) => (
                  <Button key={d.key} aria-pressed={device === d.key} onClick={() => setDevice(d.key)} className="px-2 py-1 text-xs">
                    {d.width ? t('visual.device', { width: d.width }) : t('visual.device.fit')}
                  </Button>
                ))}
              </div>
              <span className="text-xs text-slate-600" data-testid="visual-status">
                {ready ? t('visual.connected', { path: ready.path }) : session ? t('visual.connecting') : ''}
              </span>
              <div className="ml-auto flex gap-1">
                {session ? (
                  <Button onClick={() => window.open(session.url, '_blank', 'noopener,noreferrer')} className="px-2 py-1 text-xs">
                    {t('visual.openTab')}
                  </Button>
                ) : null}
                <Button onClick={close} className="px-2 py-1 text-xs">
                  {t('visual.close')}
                </Button>
              </div>
            </div>
            <ErrorNotice error={failure} />
            {needsReload ? <p className="p-3 text-sm text-amber-900">{t('visual.reloadFirst')}</p> : null}
            {noUrl ? <p className="p-3 text-sm text-slate-700">{t('visual.noUrl')}</p> : null}
            {silent ? (
              <div role="alert" className="m-2 rounded-md bg-amber-50 p-3 text-sm text-amber-900 ring-1 ring-amber-200" data-testid="visual-silent">
                <p>{t('visual.silent')}</p>
                <pre className="mt-2 whitespace-pre-wrap break-all text-xs">{`<script src="${adminOrigin}/service-admin.js" data-space="${space}" async></script>\nContent-Security-Policy: frame-ancestors 'self' ${adminOrigin}`}</pre>
              </div>
            ) : null}
            <div className="min-h-0 flex-1 overflow-auto bg-slate-100">
              {session ? (
                <iframe
                  ref={frame}
                  key={session.url}
                  src={session.url}
                  title={t('visual.frame', { name: story.name })}
                  sandbox="allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox"
                  onLoad={() => setLoads((n) => n + 1)}
                  className="mx-auto block h-full border-0 bg-white"
                  style={{ width: frameWidth ? `${frameWidth}px` : '100%' }}
                  data-testid="visual-frame"
                />
              ) : null}
            </div>
          </div>
        </section>
      ) : null}
    </>
  )
}

/** The `_uid` of the block at a presence path (`blocks/2/items/0`, or a field below it), or null. */
function uidAt(doc: unknown, path: string): string | null {
  const parts = path.split('/')
  let node: unknown = doc
  let uid: string | null = null
  for (const p of parts) {
    if (!node || typeof node !== 'object') break
    node = (node as Record<string, unknown>)[p]
    const u = node && typeof node === 'object' && !Array.isArray(node) ? (node as { _uid?: unknown })._uid : undefined
    if (typeof u === 'string') uid = u
  }
  return uid
}

/** A person's colour: a hue from their id, dark enough for white text on it. */
export function colourOf(id: number): string {
  return `hsl(${(id * 137) % 360} 70% 35%)`
}

/**
 * The Story path a page of the site shows: the frame's path without the preview URL's own path (`/ssr/blog/a` with
 * the preview URL `…/ssr/` → `/blog/a`), or null when the page is outside the preview URL.
 */
function storyPathOf(previewPage: string, fullPath: string, sitePath: string): string | null {
  const opened = new URL(previewPage).pathname
  const prefix = opened.endsWith(fullPath) ? opened.slice(0, opened.length - fullPath.length).replace(/\/+$/, '') : ''
  if (prefix && sitePath !== prefix && !sitePath.startsWith(`${prefix}/`)) return null
  const rest = sitePath.slice(prefix.length).replace(/\/+$/, '')
  return rest || null
}

/** Scrolls to and focuses the field `field` of the block `uid` in the form (the block itself without a field). */
function focusField(blocks: unknown, uid: string, field: string | null) {
  const path = pathOfBlock(blocks, uid)
  if (!path) return
  const at = field ? document.querySelector(`[data-field-path="${CSS.escape(`${path}/${field}`)}"]`) : null
  const target = at ?? document.querySelector(`[data-block-uid="${CSS.escape(uid)}"]`)
  if (!target) return
  target.scrollIntoView({ block: 'center' })
  const control = target.querySelector<HTMLElement>('input:not([type=hidden]), textarea, select, [contenteditable="true"], button')
  control?.focus({ preventScroll: true })
}
