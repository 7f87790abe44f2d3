import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi } from '@tanstack/react-router'
import { type ReactNode, useId, useState } from 'react'
import { Pager } from '../components/pager'
import {
  type Asset,
  ASSETS_PER_PAGE,
  assetsQuery,
  formatBytes,
  isRaster,
  originalPath,
  PREVIEW_WIDTHS,
  TRANSFORM_FORMATS,
  type TransformFormat,
  transformPath,
} from '../api/assets'
import { api, ApiFailure, unwrap } from '../api/client'
import { spacesQuery } from '../api/queries'
import { AssetThumb } from '../components/asset-picker'
import { Button, Dialog, EmptyState, ErrorNotice, FieldErrors, Skeleton } from '../components/ui'
import { useCan } from '../api/roles'
import { AltSuggest, useAltAi } from '../features/ai/alt-suggest'
import { UploadList, useUploads } from '../components/uploads'
import { formatNumber, t } from '../i18n'
import { queryKeys } from '../api/keys'
import { FocalEditor } from '../features/focal/focal-editor'

const route = getRouteApi('/app/spaces/$space/assets')

/** Whether a drag carries files (not text or a link dragged from the page). */
const hasFiles = (e: React.DragEvent) => [...e.dataTransfer.types].includes('Files')

/**
 * The Space's asset library: a grid of thumbnails with a search by file name; upload of several files (button, or
 * drop them anywhere on the screen) with a progress bar each; per asset: alt text per locale, a preview of its
 * transforms with their URLs, delete after a confirmation.
 */
export function AssetsScreen() {
  const { space } = route.useParams()
  // Uploads only for a role that may upload (whoami's role against x-min-role).
  const canUpload = useCan(space, 'POST', '/v1/spaces/{space}/assets')
  const [q, setQ] = useState('')
  const [page, setPage] = useState(1)
  const assets = useQuery(assetsQuery(space, q.trim(), undefined, page))
  const uploads = useUploads(space)
  const [dragging, setDragging] = useState(false)
  const [selected, setSelected] = useState<string | null>(null)
  const fileId = useId()
  const list = assets.data?.data ?? []
  const total = assets.data?.meta.total ?? 0
  const current = list.find((a) => a.uuid === selected)

  return (
    <section
      aria-labelledby={`${fileId}-title`}
      className={`relative flex flex-col gap-4 rounded-lg ${dragging ? 'ring-4 ring-indigo-400' : ''}`}
      onDragEnter={(e) => {
        if (canUpload && hasFiles(e)) setDragging(true)
      }}
      onDragOver={(e) => {
        if (!hasFiles(e)) return
        e.preventDefault()
        e.dataTransfer.dropEffect = 'copy'
      }}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDragging(false)
      }}
      onDrop={(e) => {
        if (!hasFiles(e)) return
        e.preventDefault()
        setDragging(false)
        void uploads.add(e.dataTransfer.files)
      }}
      data-testid="assets-screen"
    >
      <div className="flex flex-wrap items-end gap-3">
        <h1 id={`${fileId}-title`} className="flex-1 text-xl font-semibold">
          {t('nav.assets')}
        </h1>
        <label className="flex flex-col gap-1 text-sm font-medium">
          {t('picker.search')}
          <input type="search" value={q} onChange={(e) => {
              setQ(e.target.value)
              setPage(1)
            }}
            className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-normal"
          />
        </label>
        <label
          htmlFor={fileId}
          hidden={!canUpload}
          className="cursor-pointer rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-800 focus-within:ring-2 focus-within:ring-indigo-400"
        >
          {t('picker.upload')}
          <input
            id={fileId}
            disabled={!canUpload}
            type="file"
            multiple
            className="sr-only"
            onChange={(e) => {
              const input = e.target
              void uploads.add(input.files ?? []).then(() => {
                input.value = ''
              })
            }}
          />
        </label>
      </div>
      <p className="text-sm text-slate-700">{t('assets.dropHint')}</p>
      {dragging ? (
        <p aria-hidden className="pointer-events-none absolute inset-0 z-10 flex items-center justify-center rounded-lg bg-indigo-50/90 text-lg font-semibold text-indigo-900">
          {t('assets.dropNow')}
        </p>
      ) : null}
      <UploadList items={uploads.items} />
      {assets.isError ? <ErrorNotice error={assets.error} onRetry={() => assets.refetch()} /> : null}
      {assets.isPending ? (
        <Skeleton lines={4} />
      ) : list.length === 0 ? (
        q ? (
          <EmptyState title={t('picker.noMatch')}>{t('assets.noMatch', { q })}</EmptyState>
        ) : (
          <EmptyState title={t('picker.none')}>{t('assets.emptyText')}</EmptyState>
        )
      ) : (
        <>
          <ul aria-label={t('nav.assets')} className="grid grid-cols-[repeat(auto-fill,minmax(10rem,1fr))] gap-3">
            {list.map((a) => (
              <li key={a.uuid} className="flex flex-col gap-1 rounded-md bg-white p-2 ring-1 ring-slate-200" data-asset={a.filename}>
                <AssetThumb space={space} asset={a} alt={a.alt[Object.keys(a.alt)[0] ?? ''] ?? ''} className="h-32 w-full" />
                <span className="truncate text-sm font-medium" title={a.filename}>
                  {a.filename}
                </span>
                <span className="text-xs text-slate-600">
                  {formatBytes(a.size)}
                  {a.width && a.height ? ` · ${a.width}×${a.height}` : ''}
                </span>
                <Button aria-label={t('assets.detailsOf', { name: a.filename })} onClick={() => setSelected(a.uuid)}>
                  {t('assets.details')}
                </Button>
              </li>
            ))}
          </ul>
          <Pager page={page} perPage={ASSETS_PER_PAGE} total={total} onPage={setPage} />
        </>
      )}
      {current ? <AssetDetails key={current.uuid} space={space} asset={current} onClose={() => setSelected(null)} /> : null}
    </section>
  )
}

/** One asset: its file, alt text per Space locale, an image's focal point and crop, the transform preview, delete. */
function AssetDetails({ space, asset, onClose }: { space: string; asset: Asset; onClose: () => void }) {
  const queryClient = useQueryClient()
  const spaces = useQuery(spacesQuery())
  const info = spaces.data?.find((s) => s.slug === space)
  const locales = info?.locales?.length ? info.locales : Object.keys(asset.alt)
  const [alt, setAlt] = useState<Record<string, string>>(() => ({ ...asset.alt }))
  const [saved, setSaved] = useState(false)
  const [confirmDelete, setConfirmDelete] = useState(false)
  const [format, setFormat] = useState<TransformFormat>('webp')
  const [width, setWidth] = useState<number>(640)
  const titleId = useId()
  const formatId = useId()
  const widthId = useId()
  const invalidate = () => queryClient.invalidateQueries({ queryKey: queryKeys.assets(space) })
  const canEdit = useCan(space, 'PATCH', '/v1/spaces/{space}/assets/{asset}')
  const canDelete = useCan(space, 'DELETE', '/v1/spaces/{space}/assets/{asset}')
  // AI alt-text suggestions (an AI job each) by locale: saving a locale with its suggestion unchanged approves the job.
  const altAi = useAltAi(space, canEdit, isRaster(asset))
  const [suggested, setSuggested] = useState<Record<string, { alt: string; job: string }>>({})

  const saveAlt = useMutation({
    mutationFn: async () => {
      // Changed locales are sent; an emptied one is removed (null).
      const body: Record<string, string | null> = {}
      for (const l of locales) {
        const next = (alt[l] ?? '').trim()
        const before = asset.alt[l] ?? ''
        if (next !== before) body[l] = next === '' ? null : next
      }
      const out = await unwrap(api.PATCH('/v1/spaces/{space}/assets/{asset}', { params: { path: { space, asset: asset.uuid } }, body: { alt: body } }))
      for (const [l, s] of Object.entries(suggested)) {
        if ((alt[l] ?? '').trim() !== s.alt.trim()) continue
        // The suggestion was kept: its AI job is approved (writing the same text), not left waiting in the queue.
        await unwrap(api.POST('/v1/spaces/{space}/ai-jobs/{aiJob}/approve', { params: { path: { space, aiJob: s.job } } })).catch(() => {})
      }
      return out
    },
    onSuccess: async () => {
      setSaved(true)
      setSuggested({})
      await queryClient.invalidateQueries({ queryKey: queryKeys.aiJobs(space) })
      await invalidate()
    },
  })
  const remove = useMutation({
    mutationFn: async () => unwrap(api.DELETE('/v1/spaces/{space}/assets/{asset}', { params: { path: { space, asset: asset.uuid } } })),
    onSuccess: async () => {
      onClose()
      await invalidate()
    },
  })
  const altErrors = saveAlt.error instanceof ApiFailure ? saveAlt.error.body.errors ?? {} : {}
  const preview = transformPath(space, asset.uuid, format, width)

  return (
    <section aria-labelledby={titleId} className="flex flex-col gap-4 rounded-lg bg-white p-4 ring-1 ring-slate-300">
      <div className="flex items-start gap-3">
        <AssetThumb space={space} asset={asset} alt={alt[locales[0] ?? ''] ?? ''} className="h-24 w-24" />
        <div className="flex min-w-0 flex-1 flex-col gap-1 text-sm">
          <h2 id={titleId} className="truncate text-lg font-semibold">
            {asset.filename}
          </h2>
          <span className="text-slate-700">
            {asset.content_type} · {formatBytes(asset.size)}
            {asset.width && asset.height ? ` · ${asset.width}×${asset.height} px` : ''}
          </span>
          <a className="truncate text-indigo-800 underline" href={originalPath(space, asset.uuid)} target="_blank" rel="noopener noreferrer">
            {t('assets.original')}
          </a>
        </div>
        <Button onClick={onClose}>{t('common.close')}</Button>
      </div>

      <form
        aria-label={t('assets.alt')}
        className="flex flex-col gap-2"
        onSubmit={(e) => {
          e.preventDefault()
          setSaved(false)
          saveAlt.mutate()
        }}
      >
        <h3 className="font-medium">{t('assets.alt')}</h3>
        <p className="text-xs text-slate-600">{t('assets.altText')}</p>
        {locales.map((l) => (
          <AltInput
            key={l}
            locale={l}
            value={alt[l] ?? ''}
            errors={altErrors[`alt/${l}`] ?? altErrors[l]}
            onChange={(v) => {
              setSaved(false)
              setAlt((a) => ({ ...a, [l]: v }))
            }}
            extra={
              altAi ? (
                <AltSuggest
                  space={space}
                  asset={asset.uuid}
                  locale={l}
                  onSuggest={(text, job) => {
                    setSaved(false)
                    setAlt((a) => ({ ...a, [l]: text }))
                    setSuggested((s) => ({ ...s, [l]: { alt: text, job } }))
                  }}
                />
              ) : null
            }
          />
        ))}
        {altErrors.alt ? <FieldErrors errors={altErrors.alt} /> : null}
        {saveAlt.isError && !Object.keys(altErrors).length ? <ErrorNotice error={saveAlt.error} /> : null}
        <div className="flex items-center gap-3" hidden={!canEdit}>
          <Button tone="primary" type="submit" disabled={saveAlt.isPending || !canEdit}>
            {t('assets.saveAlt')}
          </Button>
          {saved ? (
            <span role="status" className="text-sm text-emerald-800">
              {t('assets.altSaved')}
            </span>
          ) : null}
        </div>
      </form>

      {isRaster(asset) && asset.width && asset.height ? <FocalEditor space={space} asset={asset} canEdit={canEdit} /> : null}

      {isRaster(asset) ? (
        <div className="flex flex-col gap-2">
          <h3 className="font-medium">{t('assets.transforms')}</h3>
          <p className="text-xs text-slate-600">
            {t('assets.transformsText')}
          </p>
          <div className="flex flex-wrap items-end gap-3 text-sm">
            <div className="flex flex-col gap-1">
              <label htmlFor={formatId} className="font-medium">
                {t('assets.format')}
              </label>
              <select id={formatId} value={format} onChange={(e) => setFormat(e.target.value as TransformFormat)} className="rounded-md border border-slate-300 bg-white px-2 py-1">
                {TRANSFORM_FORMATS.map((f) => (
                  <option key={f} value={f}>
                    {f}
                  </option>
                ))}
              </select>
            </div>
            <div className="flex flex-col gap-1">
              <label htmlFor={widthId} className="font-medium">
                {t('assets.width')}
              </label>
              <select id={widthId} value={width} onChange={(e) => setWidth(Number(e.target.value))} className="rounded-md border border-slate-300 bg-white px-2 py-1">
                {PREVIEW_WIDTHS.map((w) => (
                  <option key={w} value={w}>
                    {t('assets.px', { n: w })}
                  </option>
                ))}
              </select>
            </div>
          </div>
          <code className="break-all rounded bg-slate-100 px-2 py-1 text-xs" data-testid="transform-url">
            {`${location.origin}${preview}`}
          </code>
          <img src={preview} alt={t('assets.previewAlt', { format, width })} className="max-h-64 max-w-full self-start rounded bg-slate-100 object-contain" />
        </div>
      ) : null}

      {canDelete ? (
        <div className="flex justify-end">
          <Button tone="danger" onClick={() => setConfirmDelete(true)}>
            {t('assets.delete')}
          </Button>
        </div>
      ) : null}
      <Dialog open={confirmDelete} title={t('assets.deleteTitle')} onClose={() => setConfirmDelete(false)}>
        <p className="text-sm">
          <strong className="break-all">{asset.filename}</strong> {t('assets.deleteText')}
        </p>
        {remove.isError ? <ErrorNotice error={remove.error} /> : null}
        <div className="flex justify-end gap-2">
          <Button onClick={() => setConfirmDelete(false)}>{t('common.cancel')}</Button>
          <Button tone="danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
            {t('stories.delete')}
          </Button>
        </div>
      </Dialog>
    </section>
  )
}

function AltInput({ locale, value, errors, onChange, extra }: { locale: string; value: string; errors?: string[]; onChange: (v: string) => void; extra?: ReactNode }) {
  const id = useId()
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-sm">
        {t('assets.altOf', { locale })}
      </label>
      <input
        id={id}
        value={value}
        maxLength={2000}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={errors?.length ? true : undefined}
        aria-describedby={errors?.length ? `${id}-err` : undefined}
        className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm"
      />
      {extra}
      <FieldErrors id={`${id}-err`} errors={errors} />
    </div>
  )
}
