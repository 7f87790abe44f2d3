import { useQueryClient } from '@tanstack/react-query'
import { useCallback, useRef, useState } from 'react'
import { type Asset, uploadAsset } from '../api/assets'
import { ApiFailure } from '../api/client'
import { formatNumber, t } from '../i18n'
import { queryKeys } from '../api/keys'

export interface UploadItem {
  key: number
  name: string
  /** 0–1 */
  progress: number
  state: 'uploading' | 'done' | 'failed'
  error?: string
  asset?: Asset
}

/** At most this many files go up at once; the rest wait their turn. */
const PARALLEL = 2

/**
 * Uploads of several files with their progress: each file is its own request (the API takes one file per upload),
 * two at a time. When one finishes, the Space's asset lists are refetched.
 */
export function useUploads(space: string, onUploaded?: (asset: Asset) => void) {
  const queryClient = useQueryClient()
  const [items, setItems] = useState<UploadItem[]>([])
  const next = useRef(0)
  const update = (key: number, patch: Partial<UploadItem>) => setItems((all) => all.map((i) => (i.key === key ? { ...i, ...patch } : i)))

  const add = useCallback(
    async (files: FileList | File[]) => {
      const list = [...files]
      if (list.length === 0) return
      const queued = list.map((file) => ({ file, key: ++next.current }))
      const fresh: UploadItem[] = queued.map(({ file, key }) => ({ key, name: file.name, progress: 0, state: 'uploading' }))
      setItems((all) => [...all.filter((i) => i.state !== 'done'), ...fresh])
      const work = async () => {
        for (let job = queued.shift(); job; job = queued.shift()) {
          const { file, key } = job
          try {
            const asset = await uploadAsset(space, file, (progress) => update(key, { progress }))
            update(key, { state: 'done', progress: 1, asset })
            onUploaded?.(asset)
          } catch (e) {
            update(key, { state: 'failed', error: e instanceof ApiFailure || e instanceof Error ? e.message : String(e) })
          }
          await queryClient.invalidateQueries({ queryKey: queryKeys.assets(space) })
        }
      }
      await Promise.all(Array.from({ length: Math.min(PARALLEL, list.length) }, work))
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [space, queryClient, onUploaded],
  )
  const clear = () => setItems((all) => all.filter((i) => i.state === 'uploading'))
  return { items, add, clear }
}

/** The uploads in progress and their outcome (a <progress> per file, named by the file). */
export function UploadList({ items }: { items: UploadItem[] }) {
  if (items.length === 0) return null
  const done = items.filter((i) => i.state === 'done').length
  return (
    <section aria-label={t('uploads.title')} className="flex flex-col gap-2 rounded-md bg-white p-3 ring-1 ring-slate-200">
      <p className="text-sm font-medium" aria-live="polite">
        {done === items.length ? t('uploads.done', { done, count: items.length }) : t('uploads.progress', { done, count: items.length })}
      </p>
      <ul className="flex flex-col gap-1">
        {items.map((i) => (
          <li key={i.key} className="grid grid-cols-[minmax(0,1fr)_10rem_6rem] items-center gap-2 text-sm" data-upload={i.state}>
            <span className="truncate">{i.name}</span>
            <progress aria-label={t('uploads.of', { name: i.name })} max={1} value={i.progress} className="w-full" />
            <span className={i.state === 'failed' ? 'text-red-700' : 'text-slate-700'}>
              {i.state === 'done' ? t('uploads.uploaded') : i.state === 'failed' ? t('uploads.failed') : formatNumber(i.progress, { style: 'percent' })}
            </span>
            {i.error ? (
              <span role="alert" className="col-span-3 text-xs text-red-700">
                {i.error}
              </span>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  )
}
