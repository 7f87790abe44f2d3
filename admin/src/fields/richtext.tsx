import { lazy, Suspense } from 'react'
import type { RichText } from './richtext-schema'
import type { FieldProps } from './types'

// ProseMirror is loaded with the first richtext field, not with the app.
const RichtextEditor = lazy(() => import('./richtext-editor'))

/** The `richtext` field: see richtext-editor.tsx. */
export function RichtextField(props: FieldProps<RichText | string>) {
  return (
    <Suspense fallback={<p className="text-sm text-slate-600">Loading the rich-text editor…</p>}>
      <RichtextEditor {...props} />
    </Suspense>
  )
}
