import { Link } from '@tanstack/react-router'
import { type FormEvent, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { Button, CatalogErrorRetry, TextField } from '../../components/ui'
import { AuthFrame } from '../../routes/sign-in'
import { t } from '../../i18n'

/** Password reset from the sign-in screen: the API mails a link (the same answer whether the address has an account). */
export function ForgotPasswordScreen() {
  const [email, setEmail] = useState('')
  const [sent, setSent] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      await unwrap(api.POST('/v1/auth/password-reset', { body: { email } }))
      setSent(true)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <AuthFrame title={t('reset.title')}>
      {sent ? (
        <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-900 ring-1 ring-emerald-200">
          {t('reset.sent')}
        </p>
      ) : (
        <form onSubmit={submit} className="flex flex-col gap-3" noValidate>
          <p className="text-sm text-slate-700">{t('reset.text')}</p>
          <TextField label={t('signIn.email')} type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required />
          {error ? <CatalogErrorRetry error={error} /> : null}
          <Button tone="primary" type="submit" disabled={busy || !email}>
            {t('reset.submit')}
          </Button>
        </form>
      )}
      <p className="mt-4 text-sm text-slate-700">
        <Link to="/sign-in" search={{}} className="font-medium text-indigo-800 underline">
          {t('reset.back')}
        </Link>
      </p>
    </AuthFrame>
  )
}
