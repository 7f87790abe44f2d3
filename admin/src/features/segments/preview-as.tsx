import { useState } from 'react'
import { Button } from '../../components/ui'
import { t } from './messages'
import { previewAs } from './queries'

/** "Preview as": the Space's site in the preview, its draft reads naming this segment. */
export function PreviewAs({ space, segment, label, path, onFail }: { space: string; segment: string; label: string; path?: string; onFail: (e: unknown) => void }) {
  const [busy, setBusy] = useState(false)
  return (
    <Button
      disabled={busy}
      aria-label={t('seg.previewNamed', { label })}
      onClick={async () => {
        setBusy(true)
        try {
          if (!(await previewAs(space, segment, path))) onFail(new Error(t('seg.noPreviewUrl')))
        } catch (e) {
          onFail(e)
        } finally {
          setBusy(false)
        }
      }}
    >
      {t('seg.preview')}
    </Button>
  )
}

