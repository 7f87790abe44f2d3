import { useQuery } from '@tanstack/react-query'
import { useEffect, useId, useRef, useState } from 'react'
import { ASSETS_PER_PAGE, type Asset, assetsQuery, formatBytes, thumbnailPath } from '../api/assets'
import { Pager } from './pager'
import { Button, EmptyState, ErrorNotice, Skeleton } from './ui'
import { UploadList, useUploads } from './uploads'
import { t } from '../i18n'

/** A square preview of an asset: its 256 px WebP variant (or the SVG itself), else the file type. */
export function AssetThumb({ space, asset, alt = '', className = 'h-24 w-24' }: { space: string; asset: Pick<Asset, 'uuid' | 'content_type'>; alt?: string; className?: string }) {
  const src = thumbnailPath(space, asset)
  return src ? (
    <img src={src} alt={alt} loading="lazy" decoding="async" className={`${className} rounded bg-slate-100 object-contain`} />
  ) : (
    <span className={`${className} flex items-center justify-center rounded bg-slate-100 text-xs text-slate-700`}>{asset.content_type}</span>
  )
}

/**
 * The asset picker: the Space's assets as a grid with a search by file name, upload from inside (the new file is
 * picked at once), and a button to clear the field. A modal on the platform's <dialog>.
 */
export function AssetPicker({
  space,
  open,
  onPick,
  onClear,
  onClose,
  current,
}: {
  space: string
  open: boolean
  onPick: (asset: Asset) => void
  onClear?: () => void
  onClose: () => void
  current?: string
}) {
  const ref = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  useEffect(() => {
    const d = ref.current
    if (!d) return
    if (open && !d.open) d.showModal()
    if (!open && d.open) d.close()
  }, [open])
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onClose={onClose}
      className="m-auto w-full max-w-3xl rounded-lg p-0 shadow-xl backdrop:bg-slate-900/40"
    >
      {open ? <PickerBody space={space} titleId={titleId} onPick={onPick} onClear={onClear} onClose={onClose} current={current} /> : null}
    </dialog>
  )
}

function PickerBody({
  space,
  titleId,
  onPick,
  onClear,
  onClose,
  current,
}: {
  space: string
  titleId: string
  onPick: (asset: Asset) => void
  onClear?: () => void
  onClose: () => void
  current?: string
}) {
  const [q, setQ] = useState('')
  const [page, setPage] = useState(1)
  const assets = useQuery(assetsQuery(space, q.trim(), undefined, page))
  const uploads = useUploads(space)
  const fileId = useId()
  const list = assets.data?.data ?? []
  return (
    <div className="flex max-h-[85vh] flex-col gap-3 p-5">
      <div className="flex items-center gap-2">
        <h2 id={titleId} className="flex-1 text-lg font-semibold">
          {t('picker.title')}
        </h2>
        <Button onClick={onClose}>{t('common.close')}</Button>
      </div>
      <div className="flex flex-wrap items-end gap-2">
        <label className="flex flex-1 flex-col gap-1 text-sm font-medium">
          {t('picker.search')}
          <input type="search" value={q} onChange={(e) => {
              setQ(e.target.value)
              setPage(1)
            }}
            className="rounded-md border border-slate-300 px-3 py-1.5 text-sm font-normal"
          />
        </label>
        <label htmlFor={fileId} className="cursor-pointer rounded-md bg-white px-3 py-1.5 text-sm font-medium ring-1 ring-slate-300 hover:bg-slate-100 focus-within:ring-2 focus-within:ring-indigo-600">
          {t('picker.upload')}
          <input id={fileId} type="file" multiple className="sr-only" onChange={(e) => void uploads.add(e.target.files ?? []).then(() => (e.target.value = ''))} />
        </label>
        {onClear && current ? (
          <Button
            onClick={() => {
              onClear()
              onClose()
            }}
          >
            {t('picker.clear')}
          </Button>
        ) : null}
      </div>
      <UploadList items={uploads.items} />
      {assets.isError ? <ErrorNotice error={assets.error} onRetry={() => assets.refetch()} /> : null}
      <div className="min-h-40 overflow-y-auto">
        {assets.isPending ? (
          <Skeleton lines={4} />
        ) : list.length === 0 ? (
          <EmptyState title={q ? t('picker.noMatch') : t('picker.none')}>{q ? t('picker.noMatchText') : t('picker.noneText')}</EmptyState>
        ) : (
          <ul aria-label={t('picker.list')} className="grid grid-cols-[repeat(auto-fill,minmax(8rem,1fr))] gap-3">
            {list.map((a) => (
              <li key={a.uuid}>
                <button
                  type="button"
                  aria-label={t('picker.choose', { name: a.filename })}
                  aria-current={a.uuid === current ? 'true' : undefined}
                  onClick={() => {
                    onPick(a)
                    onClose()
                  }}
                  className="flex w-full flex-col items-center gap-1 rounded-md p-2 text-left ring-1 ring-slate-200 hover:bg-indigo-50 aria-[current=true]:ring-2 aria-[current=true]:ring-indigo-600"
                >
                  <AssetThumb space={space} asset={a} />
                  <span className="w-full truncate text-xs">{a.filename}</span>
                  <span className="text-xs text-slate-600">{formatBytes(a.size)}</span>
                </button>
              </li>
            ))}
          </ul>
        )}
      </div>
      <Pager page={page} perPage={ASSETS_PER_PAGE} total={assets.data?.meta.total ?? 0} onPage={setPage} />
    </div>
  )
}
