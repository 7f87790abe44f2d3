import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useRef, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { localesQuery } from '../../api/queries'
import { useCan } from '../../api/roles'
import { announce } from '../../components/announcer'
import { AssetPicker, AssetThumb } from '../../components/asset-picker'
import { CatalogError } from '../../components/catalog-error'
import { toast } from '../../components/toast'
import { Button, ErrorNotice, Skeleton, TextField } from '../../components/ui'
import { t } from './messages'
import { type Gallery, type GalleryItem, galleryKeys, galleryQuery, publicGalleryQuery } from './queries'
import { queryKeys } from '../../api/keys'

const INPUT = 'rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm'
type Row = GalleryItem & { key: string; mime?: string }
let seq = 0
const rowOf = (item: GalleryItem, mime?: string): Row => ({ ...item, caption: { ...item.caption }, alt: { ...item.alt }, key: `r${++seq}`, mime })

/** A gallery: its title per locale, its images in order (drag, buttons or Alt+↑/↓), caption and alt per locale, the public preview. */
export function GalleryEditor({ space, id, onDeleted }: { space: string; id: string; onDeleted: () => void }) {
  const q = useQuery(galleryQuery(space, id))
  if (q.isPending) return <Skeleton />
  if (q.error) return <ErrorNotice error={q.error} onRetry={() => q.refetch()} />
  return <Editor key={q.data.updated_at} space={space} gallery={q.data} onDeleted={onDeleted} />
}

function Editor({ space, gallery, onDeleted }: { space: string; gallery: Gallery; onDeleted: () => void }) {
  const queryClient = useQueryClient()
  const headingId = useId()
  const langId = useId()
  const locales = useQuery(localesQuery(space))
  const codes = locales.data?.map((l) => l.code) ?? Object.keys(gallery.title)
  const [lang, setLang] = useState<string>(() => locales.data?.find((l) => l.is_default)?.code ?? codes[0] ?? 'en')
  const [title, setTitle] = useState<Record<string, string>>({ ...gallery.title })
  const [rows, setRows] = useState<Row[]>(() => gallery.items.map((i) => rowOf(i)))
  const [dirty, setDirty] = useState(false)
  const [picking, setPicking] = useState(false)
  const [confirming, setConfirming] = useState(false)
  const dragFrom = useRef<number | null>(null)
  const canWrite = useCan(space, 'PUT', '/v1/spaces/{space}/galleries/{id}')
  const canDelete = useCan(space, 'DELETE', '/v1/spaces/{space}/galleries/{id}')
  const change = (next: Row[]) => {
    setRows(next)
    setDirty(true)
  }
  const move = (from: number, to: number, focus = false) => {
    if (to < 0 || to >= rows.length || from === to) return
    const next = [...rows]
    const [r] = next.splice(from, 1)
    next.splice(to, 0, r!)
    change(next)
    announce(t('galleries.moved', { n: to + 1, total: rows.length }))
    if (focus) requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-handle="${r!.key}"]`)?.focus())
  }
  const save = useMutation({
    mutationFn: async () =>
      (
        await unwrap(
          api.PUT('/v1/spaces/{space}/galleries/{id}', {
            params: { path: { space, id: gallery.id } },
            body: {
              slug: gallery.slug,
              title: Object.fromEntries(Object.entries(title).filter(([, s]) => s.trim())),
              items: rows.map((r) => ({
                asset_uuid: r.asset_uuid,
                caption: Object.fromEntries(Object.entries(r.caption).filter(([, s]) => s.trim())),
                alt: Object.fromEntries(Object.entries(r.alt).filter(([, s]) => s.trim())),
              })),
            },
          }),
        )
      ).data,
    onSuccess: async () => {
      setDirty(false)
      await queryClient.invalidateQueries({ queryKey: galleryKeys.all(space) })
      await queryClient.invalidateQueries({ queryKey: queryKeys.galleryPreview(space, gallery.slug) })
      toast(t('galleries.saved'))
    },
  })
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/spaces/{space}/galleries/{id}', { params: { path: { space, id: gallery.id } } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: galleryKeys.all(space) })
      toast(t('galleries.deleted'))
      onDeleted()
    },
  })
  const setText = (i: number, field: 'caption' | 'alt', value: string) => change(rows.map((r, j) => (j === i ? { ...r, [field]: { ...r[field], [lang]: value } } : r)))
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-4 rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="gallery-editor">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id={headingId} className="text-lg font-semibold">{t('galleries.editing', { slug: gallery.slug })}</h2>
        <div className="flex flex-wrap items-center gap-2">
          <label htmlFor={langId} className="text-sm font-medium">{t('galleries.language')}</label>
          <select id={langId} className={INPUT} value={lang} onChange={(e) => setLang(e.target.value)}>
            {codes.map((c) => (
              <option key={c} value={c}>{c}</option>
            ))}
          </select>
        </div>
      </div>
      <TextField label={t('galleries.titleIn', { code: lang })} value={title[lang] ?? ''} disabled={!canWrite} onChange={(e) => { setTitle({ ...title, [lang]: e.target.value }); setDirty(true) }} />
      <p className="text-xs text-slate-600" id={`${headingId}-keys`}>{t('galleries.reorderHint')}</p>
      {rows.length === 0 ? <p className="text-sm text-slate-700">{t('galleries.noImages')}</p> : null}
      <ol className="flex flex-col gap-2" aria-label={t('galleries.images')}>
        {rows.map((r, i) => (
          <li
            key={r.key}
            data-item={r.asset_uuid}
            className="flex flex-wrap items-start gap-3 rounded-md p-2 ring-1 ring-slate-200"
            onDragOver={(e) => { if (dragFrom.current !== null) e.preventDefault() }}
            onDrop={(e) => {
              e.preventDefault()
              if (dragFrom.current !== null) move(dragFrom.current, i)
              dragFrom.current = null
            }}
          >
            {canWrite ? (
              <button
                type="button"
                draggable
                data-handle={r.key}
                aria-describedby={`${headingId}-keys`}
                aria-label={t('galleries.handle', { n: i + 1 })}
                className="cursor-grab rounded px-2 py-1 text-slate-700 ring-1 ring-slate-300"
                onDragStart={(e) => {
                  dragFrom.current = i
                  e.dataTransfer.effectAllowed = 'move'
                  e.dataTransfer.setData('text/plain', r.asset_uuid)
                }}
                onKeyDown={(e) => {
                  if (!e.altKey) return
                  if (e.key === 'ArrowUp') { e.preventDefault(); move(i, i - 1, true) }
                  if (e.key === 'ArrowDown') { e.preventDefault(); move(i, i + 1, true) }
                }}
              >
                <span aria-hidden="true">⠿</span> {i + 1}
              </button>
            ) : (
              <span className="px-2 py-1">{i + 1}</span>
            )}
            <AssetThumb space={space} asset={{ uuid: r.asset_uuid, content_type: r.mime ?? 'image/jpeg' }} alt={r.alt[lang] ?? ''} className="h-20 w-20" />
            <div className="flex min-w-48 flex-1 flex-col gap-2">
              <TextField label={t('galleries.captionIn', { n: i + 1, code: lang })} value={r.caption[lang] ?? ''} disabled={!canWrite} onChange={(e) => setText(i, 'caption', e.target.value)} />
              <TextField label={t('galleries.altIn', { n: i + 1, code: lang })} value={r.alt[lang] ?? ''} disabled={!canWrite} onChange={(e) => setText(i, 'alt', e.target.value)} hint={t('galleries.altHint')} />
            </div>
            {canWrite ? (
              <div className="flex flex-col gap-1">
                <Button onClick={() => move(i, i - 1)} disabled={i === 0} aria-label={t('galleries.up', { n: i + 1 })}>↑</Button>
                <Button onClick={() => move(i, i + 1)} disabled={i === rows.length - 1} aria-label={t('galleries.down', { n: i + 1 })}>↓</Button>
                <Button onClick={() => change(rows.filter((_, j) => j !== i))} aria-label={t('galleries.removeImage', { n: i + 1 })}>✕</Button>
              </div>
            ) : null}
          </li>
        ))}
      </ol>
      {canWrite ? (
        <div className="flex flex-wrap items-center gap-2">
          <Button onClick={() => setPicking(true)}>{t('galleries.addImage')}</Button>
          <Button tone="primary" onClick={() => save.mutate()} disabled={!dirty || save.isPending}>{t('galleries.save')}</Button>
          {dirty ? <span className="text-sm text-amber-800">{t('galleries.unsaved')}</span> : null}
          {canDelete ? <Button tone="danger" onClick={() => setConfirming(true)}>{t('galleries.delete')}</Button> : null}
        </div>
      ) : null}
      {confirming ? (
        <div role="alertdialog" aria-label={t('galleries.deleteConfirm')} className="flex flex-wrap items-center gap-2 rounded-md bg-red-50 p-3 ring-1 ring-red-200">
          <span className="text-sm">{t('galleries.deleteConfirm')}</span>
          <Button tone="danger" onClick={() => remove.mutate()} disabled={remove.isPending}>{t('galleries.delete')}</Button>
          <Button onClick={() => setConfirming(false)}>{t('common.cancel')}</Button>
        </div>
      ) : null}
      <CatalogError error={save.error ?? remove.error} />
      <AssetPicker
        space={space}
        open={picking}
        onClose={() => setPicking(false)}
        onPick={(a) => {
          setPicking(false)
          change([...rows, rowOf({ asset_uuid: a.uuid, caption: {}, alt: {} }, a.content_type)])
          announce(t('galleries.added', { name: a.filename }))
        }}
      />
      <Preview space={space} slug={gallery.slug} lang={lang} stale={dirty} />
    </section>
  )
}

/** The public answer of the saved gallery, drawn as a site would: <picture> with AVIF and WebP `srcset`s. */
function Preview({ space, slug, lang, stale }: { space: string; slug: string; lang: string; stale: boolean }) {
  const headingId = useId()
  const q = useQuery(publicGalleryQuery(space, slug, lang))
  const url = `/v1/cdn/${space}/galleries/${slug}?lang=${lang}`
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-2 border-t border-slate-200 pt-3" data-testid="gallery-preview">
      <h3 id={headingId} className="text-base font-semibold">{t('galleries.preview')}</h3>
      <p className="text-xs text-slate-600">
        {stale ? t('galleries.previewStale') : t('galleries.previewHint')} <a className="break-all text-indigo-800 underline" href={url} target="_blank" rel="noreferrer">{url}</a>
      </p>
      {q.error ? <ErrorNotice error={q.error} onRetry={() => q.refetch()} /> : null}
      {q.data ? (
        <>
          {q.data.title ? <p className="font-medium">{q.data.title}</p> : null}
          <ul className="grid grid-cols-[repeat(auto-fill,minmax(10rem,1fr))] gap-3">
            {q.data.items.map((item, i) => (
              <li key={`${item.asset_uuid}-${i}`} data-preview-item={item.asset_uuid}>
                <figure className="flex flex-col gap-1">
                  <picture>
                    {item.srcset.avif ? <source type="image/avif" srcSet={item.srcset.avif} sizes="10rem" /> : null}
                    {item.srcset.webp ? <source type="image/webp" srcSet={item.srcset.webp} sizes="10rem" /> : null}
                    <img src={item.url} alt={item.alt ?? ''} width={item.width ?? undefined} height={item.height ?? undefined} loading="lazy" className="h-auto w-full rounded bg-slate-100" />
                  </picture>
                  {item.caption ? <figcaption className="text-xs text-slate-700">{item.caption}</figcaption> : null}
                </figure>
                <details className="text-xs">
                  <summary>{t('galleries.srcset')}</summary>
                  <code className="block break-all">{item.srcset.webp}</code>
                </details>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  )
}
