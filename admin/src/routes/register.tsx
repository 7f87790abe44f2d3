import { useQueryClient } from '@tanstack/react-query'
import { Link, useNavigate } from '@tanstack/react-router'
import { type FormEvent, useState } from 'react'
import { ApiFailure, api, unwrap } from '../api/client'
import { setToken } from '../auth'
import { Button, ErrorNotice, TextField } from '../components/ui'
import { AuthFrame } from './sign-in'

export function RegisterScreen() {
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const [error, setError] = useState<unknown>(null)
  const [fieldErrors, setFieldErrors] = useState<Record<string, string[]>>({})
  const [busy, setBusy] = useState(false)

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    const tenant = String(form.get('tenant_name') ?? '').trim()
    setBusy(true)
    setError(null)
    setFieldErrors({})
    try {
      const { data } = await unwrap(
        api.POST('/v1/auth/register', {
          body: {
            name: String(form.get('name')),
            email: String(form.get('email')),
            password: String(form.get('password')),
            ...(tenant ? { tenant_name: tenant } : {}),
          },
        }),
      )
      setToken(data.token)
      queryClient.clear()
      await navigate({ to: '/' })
    } catch (err) {
      setError(err)
      if (err instanceof ApiFailure) setFieldErrors(err.body.errors ?? {})
    } finally {
      setBusy(false)
    }
  }

  return (
    <AuthFrame title="Create your account">
      <form onSubmit={submit} className="flex flex-col gap-3" noValidate>
        <TextField label="Your name" name="name" autoComplete="name" required errors={fieldErrors.name} />
        <TextField label="E-mail" name="email" type="email" autoComplete="email" required errors={fieldErrors.email} />
        <TextField
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          required
          hint="At least 8 characters."
          errors={fieldErrors.password}
        />
        <TextField label="Organisation (optional)" name="tenant_name" autoComplete="organization" errors={fieldErrors.tenant_name} />
        <ErrorNotice error={error} />
        <Button tone="primary" type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create account'}
        </Button>
      </form>
      <p className="mt-4 text-sm text-slate-700">
        Have an account?{' '}
        <Link to="/sign-in" search={{}} className="font-medium text-indigo-800 underline">
          Sign in
        </Link>
      </p>
    </AuthFrame>
  )
}
