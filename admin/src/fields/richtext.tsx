import { lazy, Suspense } from 'react'
import type { RichText } from './richtext-schema'
import type { FieldProps } from './types'
import { t } from '../i18n'

// ProseMirror is loaded with the first richtext field, not with the app.
const RichtextEditor = lazy(() => import('./richtext-editor'))

/** The `richtext` field: see richtext-editor.tsx. */
export function RichtextField(props: FieldProps<RichText | string>) {
  return (
    <Suspense fallback={<p className="text-sm text-slate-600">{t('field.richtext.loading')}</p>}>
      <RichtextEditor {...props} />
    </Suspense>
  )
}
