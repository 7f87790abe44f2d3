import { useQueryClient } from '@tanstack/react-query'
import { Link, useNavigate } from '@tanstack/react-router'
import { type FormEvent, useState } from 'react'
import { ApiFailure, api, unwrap } from '../api/client'
import { signedIn } from '../admin-session'
import { Button, ErrorNotice, TextField } from '../components/ui'
import { t } from '../i18n'
import { AuthFrame } from './sign-in'

/** A Space slug from its name: lower case letters, digits and dashes, starting with a letter (at most 64). */
export function slugOf(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '')
    .slice(0, 64)
    .replace(/-+$/, '')
  return base || 'site'
}

export function RegisterScreen() {
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const [error, setError] = useState<unknown>(null)
  const [fieldErrors, setFieldErrors] = useState<Record<string, string[]>>({})
  const [busy, setBusy] = useState(false)
  const [withSpace, setWithSpace] = useState(false)
  // A sign-up past the service's first account waits for the link mailed to the address (REGISTRATION_VERIFY=on).
  const [mailed, setMailed] = useState<string | null>(null)

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    const tenant = String(form.get('tenant_name') ?? '').trim()
    setBusy(true)
    setError(null)
    setFieldErrors({})
    const account = {
      name: String(form.get('name')),
      email: String(form.get('email')),
      password: String(form.get('password')),
      ...(tenant ? { tenant_name: tenant } : {}),
    }
    const session = async (token: string) => {
      await signedIn(token)
      queryClient.clear()
    }
    // 202 (every sign-up but the service's first, whatever the address): wait for the mail, or sign in.
    const accepted = async (data: { message: string; confirmation: 'mail' | 'none' }) => {
      if (data.confirmation === 'mail') {
        setMailed(data.message)
        return false
      }
      const { data: signedIn } = await unwrap(api.POST('/v1/auth/login', { body: { email: account.email, password: account.password } }))
      await session(signedIn.token)
      return true
    }
    try {
      if (withSpace) {
        // One step (POST /v1/onboard): the account, a first Space and, when asked, the sample content to explore.
        const spaceName = String(form.get('space_name') ?? '').trim()
        const slug = slugOf(spaceName)
        const { data } = await unwrap(
          api.POST('/v1/onboard', {
            body: { ...account, space: { name: spaceName, slug }, sample_content: form.get('sample_content') === 'on' },
          }),
        )
        if ('token' in data) await session(data.token)
        else if (!(await accepted(data))) return
        await navigate({ to: '/spaces/$space', params: { space: slug }, search: {} })
        return
      }
      const { data } = await unwrap(api.POST('/v1/auth/register', { body: account }))
      if ('token' in data) await session(data.token)
      else if (!(await accepted(data))) return
      await navigate({ to: '/' })
    } catch (err) {
      setError(err)
      if (err instanceof ApiFailure) setFieldErrors(err.body.errors ?? {})
    } finally {
      setBusy(false)
    }
  }

  if (mailed) {
    return (
      <AuthFrame title={t('register.checkMail')}>
        <p className="text-sm text-slate-800" role="status">
          {mailed}
        </p>
        <p className="mt-4 text-sm text-slate-700">
          {t('register.confirmed')}{' '}
          <Link to="/sign-in" search={{}} className="font-medium text-indigo-800 underline">
            {t('signIn.submit')}
          </Link>
        </p>
      </AuthFrame>
    )
  }

  return (
    <AuthFrame title={t('register.title')}>
      <form onSubmit={submit} className="flex flex-col gap-3" noValidate>
        <TextField label={t('register.name')} name="name" autoComplete="name" required errors={fieldErrors.name} />
        <TextField label={t('signIn.email')} name="email" type="email" autoComplete="email" required errors={fieldErrors.email} />
        <TextField
          label={t('signIn.password')}
          name="password"
          type="password"
          autoComplete="new-password"
          required
          hint={t('register.passwordHint')}
          errors={fieldErrors.password}
        />
        <TextField label={t('register.organisation')} name="tenant_name" autoComplete="organization" errors={fieldErrors.tenant_name} />
        <label className="flex items-center gap-2 text-sm text-slate-800">
          <input type="checkbox" name="with_space" checked={withSpace} onChange={(e) => setWithSpace(e.target.checked)} />
          {t('register.withSpace')}
        </label>
        {withSpace ? (
          <fieldset className="flex flex-col gap-3 rounded border border-slate-300 p-3">
            <legend className="px-1 text-sm font-medium text-slate-800">{t('register.firstSpace')}</legend>
            <TextField
              label={t('register.spaceName')}
              name="space_name"
              required
              hint={t('register.spaceNameHint')}
              errors={[...(fieldErrors['space/name'] ?? []), ...(fieldErrors['space/slug'] ?? []), ...(fieldErrors.space ?? [])]}
            />
            <label className="flex items-center gap-2 text-sm text-slate-800">
              <input type="checkbox" name="sample_content" defaultChecked />
              {t('register.sample')}
            </label>
          </fieldset>
        ) : null}
        <ErrorNotice error={error} />
        <Button tone="primary" type="submit" disabled={busy}>
          {busy ? t('register.busy') : t('register.submit')}
        </Button>
      </form>
      <p className="mt-4 text-sm text-slate-700">
        {t('register.haveAccount')}{' '}
        <Link to="/sign-in" search={{}} className="font-medium text-indigo-800 underline">
          {t('signIn.submit')}
        </Link>
      </p>
    </AuthFrame>
  )
}
