import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi } from '@tanstack/react-router'
import { useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { localesQuery } from '../../api/queries'
import { useCan } from '../../api/roles'
import { CatalogError } from '../../components/catalog-error'
import { Pager } from '../../components/pager'
import { toast } from '../../components/toast'
import { Button, EmptyState, ErrorNotice, Skeleton, TextField } from '../../components/ui'
import { formatDateTime } from '../../i18n'
import { fieldErrors, t } from './messages'
import { GalleryEditor } from './gallery-editor'
import { galleriesQuery, galleryKeys, PER_PAGE } from './queries'

const route = getRouteApi('/app/spaces/$space/galleries')

/** Galleries: the list, a new gallery, and the editor of the one opened (ordered images, texts per locale, preview). */
export function GalleriesScreen() {
  const { space } = route.useParams()
  const titleId = useId()
  const [page, setPage] = useState(1)
  const [open, setOpen] = useState<string | null>(null)
  const [creating, setCreating] = useState(false)
  const list = useQuery(galleriesQuery(space, page))
  const canCreate = useCan(space, 'POST', '/v1/spaces/{space}/galleries')
  return (
    <section className="flex flex-col gap-5" aria-labelledby={titleId}>
      <header className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h1 id={titleId} tabIndex={-1} className="text-xl font-semibold">{t('galleries.title')}</h1>
          <p className="text-sm text-slate-700">{t('galleries.intro')}</p>
        </div>
        {canCreate && !creating ? <Button tone="primary" onClick={() => setCreating(true)}>{t('galleries.new')}</Button> : null}
      </header>
      {creating ? (
        <NewGallery
          space={space}
          onDone={(id) => {
            setCreating(false)
            if (id) setOpen(id)
          }}
        />
      ) : null}
      {list.isPending ? <Skeleton /> : null}
      {list.error ? <ErrorNotice error={list.error} onRetry={() => list.refetch()} /> : null}
      {list.data && list.data.data.length === 0 ? <EmptyState title={t('galleries.empty')}>{canCreate ? t('galleries.emptyHint') : null}</EmptyState> : null}
      {list.data && list.data.data.length > 0 ? (
        <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{t('galleries.title')}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                <th scope="col" className="px-3 py-2">{t('galleries.col.title')}</th>
                <th scope="col" className="px-3 py-2">{t('galleries.col.images')}</th>
                <th scope="col" className="px-3 py-2">{t('galleries.col.updated')}</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((g) => (
                <tr key={g.id} className={`border-t border-slate-200 ${open === g.id ? 'bg-indigo-50' : ''}`}>
                  <th scope="row" className="px-3 py-2 font-medium">
                    <button type="button" className="text-left text-indigo-800 underline" aria-expanded={open === g.id} onClick={() => setOpen(open === g.id ? null : g.id)}>
                      {Object.values(g.title).find((s) => s) ?? g.slug}
                    </button>
                    <span className="block text-xs font-normal text-slate-600">{g.slug}</span>
                  </th>
                  <td className="px-3 py-2">{g.items.length}</td>
                  <td className="px-3 py-2">{formatDateTime(g.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {list.data ? <Pager page={page} perPage={PER_PAGE} total={list.data.meta.total} onPage={setPage} /> : null}
      {open ? <GalleryEditor key={open} space={space} id={open} onDeleted={() => setOpen(null)} /> : null}
    </section>
  )
}

function NewGallery({ space, onDone }: { space: string; onDone: (id: string | null) => void }) {
  const queryClient = useQueryClient()
  const locales = useQuery(localesQuery(space))
  const lang = locales.data?.find((l) => l.is_default)?.code ?? 'en'
  const [slug, setSlug] = useState('')
  const [title, setTitle] = useState('')
  const create = useMutation({
    mutationFn: async () =>
      (await unwrap(api.POST('/v1/spaces/{space}/galleries', { params: { path: { space } }, body: { slug: slug.trim(), title: title.trim() ? { [lang]: title.trim() } : {}, items: [] } }))).data,
    onSuccess: async (g) => {
      await queryClient.invalidateQueries({ queryKey: galleryKeys.all(space) })
      toast(t('galleries.created', { slug: g.slug }))
      onDone(g.id)
    },
  })
  const errs = fieldErrors(create.error, { slug: 'galleries.error.slug' })
  return (
    <form
      aria-label={t('galleries.new')}
      className="flex flex-wrap items-end gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200"
      onSubmit={(e) => {
        e.preventDefault()
        create.mutate()
      }}
    >
      <TextField label={t('galleries.slug')} value={slug} onChange={(e) => setSlug(e.target.value)} required errors={errs.slug} />
      <TextField label={t('galleries.titleIn', { code: lang })} value={title} onChange={(e) => setTitle(e.target.value)} />
      <Button tone="primary" type="submit" disabled={create.isPending}>{t('galleries.create')}</Button>
      <Button onClick={() => onDone(null)}>{t('common.cancel')}</Button>
      <div className="basis-full"><CatalogError error={create.error} /></div>
    </form>
  )
}
