import { useId, useState } from 'react'
import { type MessageKey, t } from '../i18n'
import { Button, Dialog } from './ui'

/** A secret's name and value, as an answer holds it this once. */
export interface ShownSecret {
  name: string
  value: string
}

/**
 * A secret the API shows this once (a Space token, a webhook's or plugin's signing secret): a read-only field to
 * select and a copy button. Closing the dialog forgets it. `text` names the catalog keys of its title, sentence and
 * field label.
 */
export function SecretOnceDialog({
  secret,
  onClose,
  text,
  testId,
}: {
  secret: ShownSecret | null
  onClose: () => void
  text: { title: MessageKey; once: MessageKey; label: MessageKey }
  testId: string
}) {
  const fieldId = useId()
  const [copied, setCopied] = useState<string | null>(null)
  const copy = async () => {
    if (!secret) return
    try {
      await navigator.clipboard.writeText(secret.value)
      setCopied(t('tokens.copied'))
    } catch {
      setCopied(t('tokens.copyFailed'))
    }
  }
  const close = () => {
    setCopied(null)
    onClose()
  }
  return (
    <Dialog open={secret !== null} title={t(text.title)} onClose={close}>
      {secret ? (
        <>
          <p className="text-sm text-slate-800">
            <strong>{secret.name}</strong>: {t(text.once)}
          </p>
          <label htmlFor={fieldId} className="text-sm font-medium text-slate-800">
            {t(text.label)}
          </label>
          <input
            id={fieldId}
            readOnly
            value={secret.value}
            data-testid={testId}
            onFocus={(e) => e.currentTarget.select()}
            className="rounded-md border border-slate-300 bg-slate-50 px-3 py-1.5 font-mono text-sm"
          />
          <p role="status" className="text-sm text-slate-700">
            {copied ?? ''}
          </p>
          <div className="flex justify-end gap-2">
            <Button onClick={copy}>{t('tokens.copy')}</Button>
            <Button tone="primary" onClick={close}>
              {t('tokens.done')}
            </Button>
          </div>
        </>
      ) : null}
    </Dialog>
  )
}
