import { useQueryClient } from '@tanstack/react-query'
import { type FocusEvent, useCallback, useMemo, useState } from 'react'
import type { CollabView, Person } from '../../../components/block-editor'
import { blockOfPath, type CommentTarget, commentCounts, invalidateComments, useComments, useLiveStream, usePresence } from '../../../components/collab'
import { asDoc, blockPaths } from './doc'
import type { StoryDraft } from './use-story-draft'

/**
 * The editor's collaboration: presence (who edits which block), the live stream (a newer version reloads or is
 * announced through the draft), the comments and the block rows' view of them.
 */
export function useEditorCollab(space: string, uuid: string, draft: StoryDraft) {
  const queryClient = useQueryClient()
  const presence = usePresence(space, uuid)
  const live = useLiveStream(space, uuid, (event, data) => {
    if (event === 'open') {
      // (Re)connected: catch up on what may have happened while the stream was down.
      void presence.refresh()
      void invalidateComments(queryClient, space, uuid)
    } else if (event === 'presence') void presence.refresh()
    else if (event === 'comment') void invalidateComments(queryClient, space, uuid)
    else if (event === 'story') draft.onRemoteVersion((data as { version_no?: unknown } | null)?.version_no)
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
  const saved = draft.story.data
  const savedPaths = useMemo(() => blockPaths(saved ? asDoc(saved.content) : null), [saved])
  const savedPath = useCallback((uid: string) => savedPaths.get(uid), [savedPaths])

  /** On the form: tell the others which block (and field) has this editor's focus. */
  const onFocus = (e: FocusEvent) => {
    // The innermost of the field and the block around the focused element (a block's header sits inside the blocks
    // field that holds it).
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
  }

  return { others: presence.others, live, collab, commentTarget, setCommentTarget, savedPath, onFocus }
}

export type EditorCollab = ReturnType<typeof useEditorCollab>
