import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { type Asset, originalPath } from '../../api/assets'
import { api, ApiFailure, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'
import { Button, ErrorNotice } from '../../components/ui'
import { t } from './messages'

type Focus = { x: number; y: number }
type Crop = { x: number; y: number; width: number; height: number }

const clamp = (v: number, lo = 0, hi = 1) => Math.min(hi, Math.max(lo, v))
const pct = (v: number) => Math.round(v * 1000) / 10

/**
 * The window a cut of shape `aspect` (width / height) keeps of a `w`×`h` image: inside the crop, centred on the focal
 * point and clamped inside the crop, as the service's transform cuts it (`fit=cover`). Fractions of the whole image.
 */
export function coverWindow(w: number, h: number, aspect: number, focus: Focus | null, crop: Crop | null) {
  const c = crop ?? { x: 0, y: 0, width: 1, height: 1 }
  const cw = c.width * w
  const ch = c.height * h
  const [ww, wh] = cw / ch > aspect ? [ch * aspect, ch] : [cw, cw / aspect]
  const f = focus ?? { x: c.x + c.width / 2, y: c.y + c.height / 2 }
  const x = clamp(f.x * w - ww / 2, c.x * w, c.x * w + cw - ww)
  const y = clamp(f.y * h - wh / 2, c.y * h, c.y * h + ch - wh)
  return { x: x / w, y: y / h, width: ww / w, height: wh / h }
}

/**
 * The asset dialog's focal point and crop: click the image (or move the marker with the arrow keys) to set the point,
 * optionally a crop as four percentages, a square and a wide preview drawn from the original exactly as the transforms
 * will cut it, and Save (PATCH the asset). Read-only for a role that may not edit.
 */
export function FocalEditor({ space, asset, canEdit }: { space: string; asset: Asset; canEdit: boolean }) {
  const queryClient = useQueryClient()
  const [focus, setFocus] = useState<Focus | null>(asset.focus ?? null)
  const [crop, setCrop] = useState<Crop | null>(asset.crop ?? null)
  const [saved, setSaved] = useState(false)
  const titleId = useId()
  const cropErrorId = useId()
  const src = originalPath(space, asset.uuid)
  const w = asset.width ?? 1
  const h = asset.height ?? 1
  const shown = focus ?? { x: 0.5, y: 0.5 }

  const save = useMutation({
    mutationFn: async () =>
      unwrap(api.PATCH('/v1/spaces/{space}/assets/{asset}', { params: { path: { space, asset: asset.uuid } }, body: { focus, crop } })),
    onSuccess: async () => {
      setSaved(true)
      await queryClient.invalidateQueries({ queryKey: queryKeys.assets(space) })
    },
  })
  const errors = save.error instanceof ApiFailure ? (save.error.body.errors ?? {}) : {}
  const cropErrors = Object.keys(errors).some((k) => k.startsWith('crop')) ? [t('focal.error.crop')] : undefined
  const focusErrors = Object.entries(errors)
    .filter(([k]) => k.startsWith('focus'))
    .flatMap(([, v]) => v)

  const change = (f: Focus | null) => {
    setSaved(false)
    setFocus(f)
  }
  const onKey = (e: React.KeyboardEvent) => {
    const step = e.shiftKey ? 0.1 : 0.01
    const d = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] }[e.key]
    if (!d || !canEdit) return
    e.preventDefault()
    change({ x: clamp(Math.round((shown.x + d[0]!) * 1000) / 1000), y: clamp(Math.round((shown.y + d[1]!) * 1000) / 1000) })
  }
  const setCropPart = (k: keyof Crop, percent: string) => {
    setSaved(false)
    const v = Number(percent)
    if (!Number.isFinite(v)) return
    setCrop((c) => ({ ...(c ?? { x: 0, y: 0, width: 1, height: 1 }), [k]: clamp(v / 100) }))
  }

  return (
    <section aria-labelledby={titleId} className="flex flex-col gap-3" data-testid="focal-editor">
      <h3 id={titleId} className="font-medium">
        {t('focal.title')}
      </h3>
      <p className="text-xs text-slate-600">{t('focal.intro')}</p>
      <div className="flex flex-wrap items-start gap-4">
        {/* A click anywhere on the image sets the point; the marker is the keyboard's way (a real button). */}
        {/* biome-ignore lint/a11y/useKeyWithClickEvents: the marker button inside takes the keyboard */}
        <div
          className={`relative inline-block max-w-full select-none ${canEdit ? 'cursor-crosshair' : ''}`}
          data-testid="focal-image"
          onClick={(e) => {
            if (!canEdit) return
            const r = e.currentTarget.getBoundingClientRect()
            if (!r.width || !r.height) return
            change({ x: clamp(Math.round(((e.clientX - r.left) / r.width) * 1000) / 1000), y: clamp(Math.round(((e.clientY - r.top) / r.height) * 1000) / 1000) })
          }}
        >
          <img src={src} alt={t('focal.imageAlt')} draggable={false} className="block max-h-72 max-w-full rounded bg-slate-100" />
          {crop ? (
            <div
              aria-hidden
              className="pointer-events-none absolute border-2 border-dashed border-amber-400 shadow-[0_0_0_9999px_rgba(15,23,42,0.45)]"
              style={{ left: `${crop.x * 100}%`, top: `${crop.y * 100}%`, width: `${crop.width * 100}%`, height: `${crop.height * 100}%` }}
            />
          ) : null}
          <button
            type="button"
            disabled={!canEdit}
            aria-label={t('focal.marker', { x: pct(shown.x), y: pct(shown.y) })}
            data-testid="focal-marker"
            onKeyDown={onKey}
            onClick={(e) => e.stopPropagation()}
            className="absolute h-6 w-6 -translate-x-1/2 -translate-y-1/2 rounded-full border-2 border-white bg-indigo-700/80 shadow ring-2 ring-indigo-900 focus:outline-none focus-visible:ring-4 focus-visible:ring-amber-400"
            style={{ left: `${shown.x * 100}%`, top: `${shown.y * 100}%` }}
          />
        </div>
        <div className="flex flex-col gap-2 text-sm">
          <span className="font-medium">{t('focal.preview')}</span>
          <div className="flex items-start gap-3">
            <Preview src={src} w={w} h={h} aspect={1} focus={focus} crop={crop} label={t('focal.square')} className="w-24" />
            <Preview src={src} w={w} h={h} aspect={16 / 9} focus={focus} crop={crop} label={t('focal.wide')} className="w-44" />
          </div>
        </div>
      </div>
      <p className="text-sm" data-testid="focal-position" role="status">
        {focus ? t('focal.position', { x: pct(focus.x), y: pct(focus.y) }) : t('focal.unset')}
      </p>
      {focusErrors.length ? (
        <p role="alert" className="text-xs text-red-700">
          {focusErrors.join(' ')}
        </p>
      ) : null}
      <fieldset className="flex flex-col gap-2" disabled={!canEdit}>
        <legend className="sr-only">{t('focal.crop')}</legend>
        <label className="flex items-center gap-2 text-sm">
          <input
            type="checkbox"
            checked={crop !== null}
            onChange={(e) => {
              setSaved(false)
              setCrop(e.target.checked ? { x: 0, y: 0, width: 1, height: 1 } : null)
            }}
          />
          {t('focal.crop')}
        </label>
        {crop ? (
          <>
            <p className="text-xs text-slate-600">{t('focal.cropHint')}</p>
            <div className="flex flex-wrap gap-3">
              {(
                [
                  ['x', 'focal.cropX'],
                  ['y', 'focal.cropY'],
                  ['width', 'focal.cropWidth'],
                  ['height', 'focal.cropHeight'],
                ] as const
              ).map(([k, label]) => (
                <label key={k} className="flex flex-col gap-1 text-sm">
                  {t(label)}
                  <input
                    type="number"
                    min={0}
                    max={100}
                    step={0.1}
                    value={pct(crop[k])}
                    onChange={(e) => setCropPart(k, e.target.value)}
                    aria-invalid={cropErrors ? true : undefined}
                    aria-describedby={cropErrors ? cropErrorId : undefined}
                    className="w-24 rounded-md border border-slate-300 bg-white px-2 py-1"
                  />
                </label>
              ))}
            </div>
            {cropErrors ? (
              <p id={cropErrorId} role="alert" className="text-xs text-red-700">
                {cropErrors[0]}
              </p>
            ) : null}
          </>
        ) : null}
      </fieldset>
      {save.isError && !Object.keys(errors).length ? <ErrorNotice error={save.error} /> : null}
      {canEdit ? (
        <div className="flex flex-wrap items-center gap-3">
          <Button tone="primary" disabled={save.isPending} onClick={() => save.mutate()}>
            {t('focal.save')}
          </Button>
          <Button disabled={!focus} onClick={() => change(null)}>
            {t('focal.reset')}
          </Button>
          {saved ? (
            <span role="status" className="text-sm text-emerald-800">
              {t('focal.saved')}
            </span>
          ) : null}
        </div>
      ) : null}
    </section>
  )
}

/** A cut of `aspect`, drawn from the original by scaling and shifting it inside a box of that shape. */
function Preview(props: { src: string; w: number; h: number; aspect: number; focus: Focus | null; crop: Crop | null; label: string; className: string }) {
  const win = coverWindow(props.w, props.h, props.aspect, props.focus, props.crop)
  return (
    <figure className="flex flex-col gap-1">
      <div className={`relative overflow-hidden rounded bg-slate-100 ${props.className}`} style={{ aspectRatio: String(props.aspect) }}>
        <img
          src={props.src}
          alt={t('focal.previewAlt', { shape: props.label })}
          className="absolute max-w-none"
          style={{
            width: `${100 / win.width}%`,
            height: `${100 / win.height}%`,
            left: `${(-win.x / win.width) * 100}%`,
            top: `${(-win.y / win.height) * 100}%`,
          }}
        />
      </div>
      <figcaption className="text-xs text-slate-700">{props.label}</figcaption>
    </figure>
  )
}
