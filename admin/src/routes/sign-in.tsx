import { useQueryClient } from '@tanstack/react-query'
import { getRouteApi, Link, useRouter } from '@tanstack/react-router'
import { type FormEvent, useEffect, useState } from 'react'
import { ApiFailure, api, unwrap } from '../api/client'
import { resumeAdminSession, signedIn } from '../admin-session'
import { Button, ErrorNotice, TextField } from '../components/ui'
import { t } from '../i18n'

const route = getRouteApi('/sign-in')

export function AuthFrame({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <main className="mx-auto mt-16 max-w-sm rounded-lg bg-white p-6 shadow ring-1 ring-slate-200">
      <h1 className="mb-4 text-xl font-semibold">{title}</h1>
      {children}
    </main>
  )
}

export function SignInScreen() {
  const { redirect } = route.useSearch()
  const router = useRouter()
  const queryClient = useQueryClient()
  const [error, setError] = useState<unknown>(null)
  const [fieldErrors, setFieldErrors] = useState<Record<string, string[]>>({})
  const [busy, setBusy] = useState(false)
  // A token that ran out while the browser's admin session lives on (a tab that slept past its renewal): back in
  // without the password. No session: the form stays.
  useEffect(() => {
    let live = true
    void resumeAdminSession().then(async (resumed) => {
      if (!resumed || !live) return
      queryClient.clear()
      if (redirect) await router.navigate({ href: redirect })
      else await router.navigate({ to: '/' })
    })
    return () => {
      live = false
    }
  }, [])

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    setBusy(true)
    setError(null)
    setFieldErrors({})
    try {
      const { data } = await unwrap(api.POST('/v1/auth/login', { body: { email: String(form.get('email')), password: String(form.get('password')) } }))
      await signedIn(data.token)
      queryClient.clear()
      if (redirect) await router.navigate({ href: redirect })
      else await router.navigate({ to: '/' })
    } catch (err) {
      setError(err)
      if (err instanceof ApiFailure) setFieldErrors(err.body.errors ?? {})
    } finally {
      setBusy(false)
    }
  }

  return (
    <AuthFrame title={t('signIn.title')}>
      <form onSubmit={submit} className="flex flex-col gap-3" noValidate>
        <TextField label={t('signIn.email')} name="email" type="email" autoComplete="username" required errors={fieldErrors.email} />
        <TextField label={t('signIn.password')} name="password" type="password" autoComplete="current-password" required errors={fieldErrors.password} />
        <ErrorNotice error={error} />
        <Button tone="primary" type="submit" disabled={busy}>
          {busy ? t('signIn.busy') : t('signIn.submit')}
        </Button>
      </form>
      <p className="mt-4 text-sm text-slate-700">
        <Link to="/forgot-password" className="font-medium text-indigo-800 underline">
          {t('signIn.forgot')}
        </Link>
      </p>
      <p className="mt-2 text-sm text-slate-700">
        {t('signIn.noAccount')}{' '}
        <Link to="/register" className="font-medium text-indigo-800 underline">
          {t('signIn.register')}
        </Link>
      </p>
    </AuthFrame>
  )
}
