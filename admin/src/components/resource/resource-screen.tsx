import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { ADMIN_MANIFEST, type ResourceName } from '../../api/admin-manifest'
import type { ManifestResource } from '../../api/manifest-types'
import { atLeast, useSpaceRole } from '../../api/roles'
import { t } from '../../i18n'
import { CatalogError } from '../catalog-error'
import { ListPager } from '../list-toolbar'
import { Notice } from '../notice'
import { SecretOnceDialog, type ShownSecret } from '../secret-once'
import { Button, Dialog, EmptyState, Loading } from '../ui'
import { callOperation, type Row, tk } from './call'
import { Cell } from './cells'
import { ResourceForm } from './resource-form'
import { ResourceLog } from './resource-log'
import { queryKeys } from '../../api/keys'

const PAGE = 25
type Action = ManifestResource['actions'][number]

/**
 * One screen for a resource of the manifest (admin-manifest.ts, generated from the routes' `x-admin`): its list with
 * paging, a create/edit form from the body's JSON Schema, the row actions (danger ones ask first, a secret in an
 * answer is shown once), on/off, reorder and the row's log. A control shows only when the caller's role reaches the
 * operation's minimum role.
 */
export function ResourceScreen({ space, resource: name }: { space: string; resource: ResourceName }) {
  const resource: ManifestResource = ADMIN_MANIFEST[name]
  const role = useSpaceRole(space)
  const can = (op?: { minRole: 'viewer' | 'editor' | 'admin' }) => op !== undefined && atLeast(role, op.minRole)
  const queryClient = useQueryClient()
  const titleId = useId()
  const listKey = queryKeys.resource(space, resource.list.path)
  const [page, setPage] = useState(1)
  const list = useQuery({
    queryKey: queryKeys.resourcePage(space, resource.list.path, resource.list.paged ? page : 0),
    queryFn: () =>
      callOperation<{ data: Row[]; meta?: { total?: number } }>(resource.list, { space }, resource.list.paged ? { query: { page, per_page: PAGE } } : {}),
  })
  const [notice, setNotice] = useState<string | null>(null)
  const [editing, setEditing] = useState<Row | 'new' | null>(null)
  const [confirming, setConfirming] = useState<{ action: Action; row: Row } | null>(null)
  const [secret, setSecret] = useState<ShownSecret | null>(null)
  const [logOf, setLogOf] = useState<Row | null>(null)
  const refresh = () => queryClient.invalidateQueries({ queryKey: listKey })
  const nameOf = (row: Row) => String(row[resource.name] ?? row[resource.itemKey] ?? '')
  const itemOf = (row: Row) => ({ space, [resource.itemParam]: String(row[resource.itemKey]) })

  const save = useMutation({
    mutationFn: ({ row, body }: { row: Row | 'new'; body: Row }) =>
      row === 'new' ? callOperation<{ data: Row }>(resource.create!, { space }, { body }) : callOperation<{ data: Row }>(resource.update!, itemOf(row), { body }),
    onSuccess: async ({ data }, { row }) => {
      setEditing(null)
      await refresh()
      const shown = row === 'new' ? resource.create?.secret : undefined
      if (shown && typeof data[shown] === 'string') setSecret({ name: nameOf(data), value: data[shown] as string })
      setNotice(t(row === 'new' ? 'resource.created' : 'resource.saved', { name: nameOf(data) }))
    },
  })
  const run = useMutation({
    mutationFn: ({ action, row }: { action: Action; row: Row }) => callOperation<{ data?: Row } | undefined>(action, itemOf(row)),
    onSuccess: async (answer, { action, row }) => {
      setConfirming(null)
      await refresh()
      if (logOf && action.kind === 'delete' && logOf[resource.itemKey] === row[resource.itemKey]) setLogOf(null)
      await queryClient.invalidateQueries({ queryKey: queryKeys.resource(space, resource.log?.path ?? '') })
      const value = action.secret ? answer?.data?.[action.secret] : undefined
      if (typeof value === 'string') setSecret({ name: nameOf(row), value })
      setNotice(t('resource.doneOn', { action: tk(action.label), name: nameOf(row) }))
    },
  })
  const patch = useMutation({
    mutationFn: async (changes: { row: Row; body: Row }[]) => {
      for (const c of changes) await callOperation(resource.update ?? resource.toggle!, itemOf(c.row), { body: c.body })
    },
    onSuccess: async () => {
      await refresh()
      setNotice(t('resource.updated'))
    },
  })

  const rows = list.data?.data ?? []
  const total = resource.list.paged ? (list.data?.meta?.total ?? rows.length) : rows.length
  const shown = resource.list.paged ? rows : rows.slice((page - 1) * PAGE, page * PAGE)
  const actions = resource.actions.filter((a) => can(a))
  const canToggle = can(resource.toggle)
  const canReorder = can(resource.reorder)
  const canEdit = can(resource.update)

  const move = (index: number, by: -1 | 1) => {
    const field = resource.reorder!.field
    const a = rows[index]!
    const b = rows[index + by]
    if (!b) return
    let [va, vb] = [Number(a[field]), Number(b[field])]
    // Equal positions (the order then falls back to the id): make room so the swap is a real change.
    if (va === vb) [va, vb] = by === -1 ? [va + 1, va] : [va, va + 1]
    patch.mutate([
      { row: a, body: { [field]: vb } },
      { row: b, body: { [field]: va } },
    ])
  }

  return (
    <section className="flex flex-col gap-6" aria-labelledby={titleId}>
      <header className="flex flex-wrap items-start gap-3">
        <div className="mr-auto">
          <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">
            {tk(resource.title)}
          </h1>
          <p className="text-sm text-slate-700">{tk(resource.intro)}</p>
        </div>
        {can(resource.create) ? (
          <Button tone="primary" onClick={() => (save.reset(), setEditing('new'))}>
            {tk(resource.create!.label)}
          </Button>
        ) : null}
      </header>
      <Notice text={notice} />
      {list.isPending ? <Loading what={t('common.loading')} /> : null}
      <CatalogError error={list.error ?? patch.error} />
      {list.error ? (
        <div>
          <Button onClick={() => list.refetch()}>{t('common.retry')}</Button>
        </div>
      ) : null}
      {list.data && rows.length === 0 ? <EmptyState title={tk(resource.empty)} /> : null}
      {shown.length > 0 ? (
        <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{tk(resource.title)}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                {resource.list.columns.map((c) => (
                  <th key={c.key} scope="col" className="px-3 py-2 whitespace-nowrap">
                    {tk(c.label)}
                  </th>
                ))}
                <th scope="col" className="px-3 py-2">
                  <span className="sr-only">{t('resource.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((row, i) => {
                const index = (resource.list.paged ? 0 : (page - 1) * PAGE) + i
                const rowName = nameOf(row)
                return (
                  <tr key={String(row[resource.itemKey])} className="border-t border-slate-200 align-top" data-row={rowName}>
                    {resource.list.columns.map((c) => (
                      <td key={c.key} className="px-3 py-2">
                        <Cell column={c} row={row} />
                      </td>
                    ))}
                    <td className="px-3 py-2">
                      <div className="flex flex-wrap justify-end gap-1">
                        {resource.log && can(resource.log) ? (
                          <Button aria-pressed={logOf?.[resource.itemKey] === row[resource.itemKey]} aria-label={t('resource.on', { action: tk(resource.log.label), name: rowName })} onClick={() => setLogOf(row)}>
                            {tk(resource.log.label)}
                          </Button>
                        ) : null}
                        {canEdit ? (
                          <Button aria-label={t('resource.on', { action: tk(resource.update!.label), name: rowName })} onClick={() => (save.reset(), setEditing(row))}>
                            {tk(resource.update!.label)}
                          </Button>
                        ) : null}
                        {canToggle ? (
                          <Button
                            aria-label={t('resource.on', { action: tk(row[resource.toggle!.field] ? resource.toggle!.off : resource.toggle!.on), name: rowName })}
                            disabled={patch.isPending}
                            onClick={() => patch.mutate([{ row, body: { [resource.toggle!.field]: !row[resource.toggle!.field] } }])}
                          >
                            {tk(row[resource.toggle!.field] ? resource.toggle!.off : resource.toggle!.on)}
                          </Button>
                        ) : null}
                        {canReorder ? (
                          <>
                            <Button aria-label={t('resource.moveUp', { name: rowName })} disabled={index === 0 || patch.isPending} onClick={() => move(index, -1)}>
                              ↑
                            </Button>
                            <Button aria-label={t('resource.moveDown', { name: rowName })} disabled={index === rows.length - 1 || patch.isPending} onClick={() => move(index, 1)}>
                              ↓
                            </Button>
                          </>
                        ) : null}
                        {actions.map((a) => (
                          <Button
                            key={`${a.method} ${a.path}`}
                            tone={a.kind === 'delete' ? 'danger' : 'secondary'}
                            aria-label={t('resource.on', { action: tk(a.label), name: rowName })}
                            disabled={run.isPending}
                            onClick={() => (a.danger ? (run.reset(), setConfirming({ action: a, row })) : run.mutate({ action: a, row }))}
                          >
                            {tk(a.label)}
                          </Button>
                        ))}
                      </div>
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      {!confirming ? <CatalogError error={run.error} /> : null}
      <ListPager page={page} perPage={PAGE} total={total} onPage={setPage} />

      {logOf && resource.log ? <ResourceLog key={String(logOf[resource.itemKey])} space={space} resource={resource} row={logOf} role={role} onNotice={setNotice} /> : null}

      <Dialog
        open={editing !== null}
        title={editing === 'new' ? tk(resource.create?.label ?? '') : editing ? t('resource.on', { action: tk(resource.update?.label ?? ''), name: nameOf(editing) }) : ''}
        onClose={() => setEditing(null)}
      >
        {editing !== null ? (
          <ResourceForm
            fields={(editing === 'new' ? resource.create?.fields : resource.update?.fields) ?? []}
            initial={editing === 'new' ? undefined : editing}
            submitLabel={editing === 'new' ? tk(resource.create!.label) : t('resource.save')}
            busy={save.isPending}
            error={save.error}
            onSubmit={(body) => save.mutate({ row: editing, body })}
            onCancel={() => setEditing(null)}
          />
        ) : null}
      </Dialog>

      <Dialog open={confirming !== null} title={confirming ? t('resource.confirmTitle', { action: tk(confirming.action.label), name: nameOf(confirming.row) }) : ''} onClose={() => setConfirming(null)}>
        {confirming ? (
          <>
            <p className="text-sm text-slate-800">{t(confirming.action.kind === 'delete' ? 'resource.confirmDelete' : 'resource.confirmAction')}</p>
            <CatalogError error={run.error} />
            <div className="flex justify-end gap-2">
              <Button onClick={() => setConfirming(null)}>{t('common.cancel')}</Button>
              <Button tone="danger" disabled={run.isPending} onClick={() => run.mutate(confirming)}>
                {tk(confirming.action.label)}
              </Button>
            </div>
          </>
        ) : null}
      </Dialog>

      <SecretOnceDialog
        secret={secret}
        onClose={() => setSecret(null)}
        text={{ title: 'resource.secretTitle', once: 'resource.secretOnce', label: 'resource.secretLabel' }}
        testId="secret-once"
      />
    </section>
  )
}
