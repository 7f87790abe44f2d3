import { useQuery } from '@tanstack/react-query'
import { useParams } from '@tanstack/react-router'
import { useState } from 'react'
import { assetQuery } from '../api/assets'
import { ApiFailure } from '../api/client'
import { AssetPicker, AssetThumb } from '../components/asset-picker'
import { Button } from '../components/ui'
import type { FieldProps } from './types'
import { t } from '../i18n'

/** The stored reference: `{uuid}` (the public read adds url, alt, width, … to it). Other stored keys are kept. */
type AssetRef = { uuid: string } & Record<string, unknown>

/**
 * The `asset` field: a thumbnail of the chosen asset (its 256 px WebP transform) with its file name, a button opening
 * the asset picker, and one clearing the field. Stores `{uuid}`: the read resolves the rest, so a renamed or re-alted
 * asset needs no Story edit.
 */
export function AssetField({ id, name, value, onChange, describedBy, invalid }: FieldProps<AssetRef>) {
  const { space } = useParams({ strict: false }) as { space?: string }
  const [open, setOpen] = useState(false)
  const uuid = typeof value?.uuid === 'string' ? value.uuid : undefined
  const asset = useQuery({ ...assetQuery(space ?? '', uuid ?? ''), enabled: !!space && !!uuid })
  const missing = asset.error instanceof ApiFailure && asset.error.status === 404
  if (!space) return null
  return (
    <div className="flex items-center gap-3 rounded-md p-2 ring-1 ring-slate-200 aria-invalid:ring-red-600" aria-invalid={invalid || undefined} data-asset-uuid={uuid}>
      {asset.data ? <AssetThumb space={space} asset={asset.data} className="h-16 w-16" /> : null}
      <div className="flex min-w-0 flex-1 flex-col text-sm" id={`${id}-current`}>
        {!uuid ? (
          <span className="text-slate-600">{t('field.asset.none')}</span>
        ) : asset.data ? (
          <span className="truncate">{asset.data.filename}</span>
        ) : missing ? (
          <span className="text-red-700">{t('field.asset.missing', { uuid })}</span>
        ) : (
          <span className="text-slate-600">{uuid}</span>
        )}
      </div>
      <Button
        id={id}
        aria-label={uuid ? t('field.asset.replaceOf', { name }) : t('field.asset.chooseFor', { name })}
        aria-describedby={[`${id}-current`, describedBy].filter(Boolean).join(' ')}
        onClick={() => setOpen(true)}
      >
        {uuid ? t('field.asset.replace') : t('field.asset.choose')}
      </Button>
      {uuid ? (
        <Button aria-label={t('field.asset.clearOf', { name })} onClick={() => onChange(undefined)}>
          {t('field.asset.clear')}
        </Button>
      ) : null}
      <AssetPicker
        space={space}
        open={open}
        current={uuid}
        onPick={(a) => onChange({ uuid: a.uuid })}
        onClear={() => onChange(undefined)}
        onClose={() => setOpen(false)}
      />
    </div>
  )
}
