import { type QueryKey, type UseQueryResult, useMutation, useQueryClient } from '@tanstack/react-query'
import { type ReactNode, useId, useState } from 'react'
import { CatalogError } from './catalog-error'
import { savePriorities } from './priority-list'
import { toast } from './toast'
import { Button, Dialog, EmptyState, ErrorNotice, Skeleton } from './ui'
import { t } from '../i18n'

/** An item of a priority-ordered list of rules (DOM overlays, audience segments). */
export type PriorityItem = { id: string | number; priority: number; active: boolean }

/**
 * The mutations a screen of priority-ordered rules shares: switch one on or off, delete one (after the dialog the
 * screen shows for `deleting`), and save a new order as priorities 10, 20, 30, … Failures of a toggle or a reorder go to
 * `failure` (shown by the frame); the list is refetched after each.
 */
export function usePriorityRules<T extends PriorityItem>({
  list,
  queryKey,
  update,
  destroy,
  said,
}: {
  list: UseQueryResult<T[]>
  /** The list's query key: refetched after a change, and read for the freshest priorities during a reorder. */
  queryKey: QueryKey
  update: (item: T, change: { active?: boolean; priority?: number }) => Promise<{ data: T }>
  destroy: (item: T) => Promise<unknown>
  /** The toasts after a toggle and a delete. */
  said: { activated: (item: T) => string; deactivated: (item: T) => string; deleted: (item: T) => string }
}) {
  const queryClient = useQueryClient()
  const [deleting, setDeleting] = useState<T | null>(null)
  const [failure, setFailure] = useState<unknown>(null)
  const refresh = () => queryClient.invalidateQueries({ queryKey })
  const toggle = useMutation({
    mutationFn: (item: T) => update(item, { active: !item.active }),
    onSuccess: ({ data }) => toast(data.active ? said.activated(data) : said.deactivated(data)),
    onError: setFailure,
    onSettled: refresh,
  })
  const remove = useMutation({
    mutationFn: (item: T) => destroy(item),
    onSuccess: (_, item) => {
      toast(said.deleted(item))
      setDeleting(null)
    },
    onSettled: refresh,
  })
  /** Saves a new order (only the items whose priority changes). */
  const reorder = (next: T[]) => {
    // A move made while an earlier one was saved comes with the items as they were before that save: compared with
    // the ones refetched after it (in the cache), so a priority it changed is not taken as unchanged.
    const now = new Map((queryClient.getQueryData<T[]>(queryKey) ?? []).map((x) => [x.id, x]))
    return savePriorities(next.map((x) => now.get(x.id) ?? x), (item, priority) => update(item, { priority }))
      .catch(setFailure)
      .then(refresh)
  }
  return { list, items: list.data ?? [], toggle, remove, reorder, deleting, setDeleting, failure, setFailure }
}

/**
 * The frame of such a screen: the heading with its introduction and the New button (for those who may create), the
 * loading, failure and empty states, the list (`children`) and whatever follows it, and the delete dialog.
 */
export function PriorityScreen<T extends PriorityItem>({
  rules,
  canCreate,
  onNew,
  words,
  children,
}: {
  rules: ReturnType<typeof usePriorityRules<T>>
  canCreate: boolean
  onNew: () => void
  words: {
    title: string
    intro: string
    new: string
    empty: string
    emptyCreate: string
    emptyAsk: string
    deleteTitle: (item: T | null) => string
    deleteText: string
    delete: string
  }
  children: ReactNode
}) {
  const titleId = useId()
  const { list, items, remove, deleting, setDeleting, failure } = rules
  return (
    <section className="flex flex-col gap-4" aria-labelledby={titleId}>
      <header className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">
            {words.title}
          </h1>
          <p className="text-sm text-slate-700">{words.intro}</p>
        </div>
        {canCreate ? (
          <Button tone="primary" onClick={onNew}>
            {words.new}
          </Button>
        ) : null}
      </header>
      {list.isPending ? <Skeleton lines={4} /> : null}
      <ErrorNotice error={list.error} onRetry={() => list.refetch()} />
      <CatalogError error={failure} />
      {list.data && items.length === 0 ? <EmptyState title={words.empty}>{canCreate ? words.emptyCreate : words.emptyAsk}</EmptyState> : null}
      {children}
      <Dialog open={deleting !== null} title={words.deleteTitle(deleting)} onClose={() => setDeleting(null)}>
        <p className="text-sm">{words.deleteText}</p>
        <CatalogError error={remove.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => setDeleting(null)}>{t('common.cancel')}</Button>
          <Button tone="danger" onClick={() => deleting && remove.mutate(deleting)} disabled={remove.isPending}>
            {words.delete}
          </Button>
        </div>
      </Dialog>
    </section>
  )
}
