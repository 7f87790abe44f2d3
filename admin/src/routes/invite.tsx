import { useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi, useNavigate } from '@tanstack/react-router'
import { type FormEvent, useId, useState, useSyncExternalStore } from 'react'
import { ApiFailure, api, unwrap } from '../api/client'
import { whoamiQuery } from '../api/queries'
import { getToken, onTokenChange } from '../auth'
import { signedIn as openSession, signOut as endSession } from '../admin-session'
import { Button, Loading, TextField } from '../components/ui'
import { CatalogError } from '../components/catalog-error'
import { errorText, formatDateTime, roleName, t } from '../i18n'
import { AuthFrame } from './sign-in'
import { queryKeys } from '../api/keys'

const route = getRouteApi('/invite/$token')

const inviteQuery = (token: string) => ({
  queryKey: queryKeys.invite(token),
  queryFn: async () => (await unwrap(api.GET('/v1/invite/{token}', { params: { path: { token } } }))).data,
  retry: false,
  staleTime: Number.POSITIVE_INFINITY,
})

const useSignedIn = () => useSyncExternalStore(onTokenChange, () => getToken() !== null)

/**
 * `/admin/invite/{token}` (the mail's `/invite/{token}` redirects here): what the invitation is — Space, inviter,
 * role, the masked address — and accept (signed in; or sign in, or register, with the invited address) or decline.
 */
export function InviteScreen() {
  const { token } = route.useParams()
  const preview = useQuery(inviteQuery(token))
  const [declined, setDeclined] = useState(false)
  const [error, setError] = useState<unknown>(null)

  if (preview.isPending) return <AuthFrame title={t('invite.title')}><Loading what={t('invite.loading')} /></AuthFrame>
  if (preview.isError) {
    const gone = preview.error instanceof ApiFailure && (preview.error.status === 404 || preview.error.status === 422)
    return (
      <AuthFrame title={t('invite.title')}>
        <p role="alert" className="text-sm text-slate-800">
          {gone ? t('invite.gone') : errorText(preview.error)}
        </p>
      </AuthFrame>
    )
  }
  if (declined) {
    return (
      <AuthFrame title={t('invite.title')}>
        <p role="status" className="text-sm text-slate-800">
          {t('invite.declined')}
        </p>
      </AuthFrame>
    )
  }
  const inv = preview.data
  const decline = async () => {
    setError(null)
    try {
      await unwrap(api.POST('/v1/invite/{token}/decline', { params: { path: { token } } }))
      setDeclined(true)
    } catch (err) {
      setError(err)
    }
  }
  return (
    <AuthFrame title={t('invite.title')}>
      <div className="flex flex-col gap-2 text-sm text-slate-800">
        <p data-testid="invite-summary">{t('invite.summary', { inviter: inv.invited_by.name, space: inv.space.name, role: roleName(inv.role) })}</p>
        <p>{t('invite.sentTo', { email: inv.email })}</p>
        <p className="text-slate-600">{t('invite.expires', { date: formatDateTime(inv.expires_at) })}</p>
      </div>
      <div className="mt-4">
        <Answer token={token} accountExists={inv.account_exists} onDecline={decline} />
      </div>
      <div className="mt-3">
        <CatalogError error={error} />
      </div>
    </AuthFrame>
  )
}

function Answer({ token, accountExists, onDecline }: { token: string; accountExists: boolean; onDecline: () => void }) {
  const signedIn = useSignedIn()
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [mode, setMode] = useState<'signin' | 'register'>(accountExists ? 'signin' : 'register')
  const [mailed, setMailed] = useState(false)
  const modeName = useId()

  const accept = async () => {
    const { data } = await unwrap(api.POST('/v1/invite/{token}/accept', { params: { path: { token } } }))
    queryClient.clear()
    await navigate({ to: '/spaces/$space', params: { space: data.space.slug }, search: {} })
  }
  const run = async (work: () => Promise<void>) => {
    setBusy(true)
    setError(null)
    try {
      await work()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  if (signedIn) return <SignedInAnswer busy={busy} error={error} onAccept={() => run(accept)} onDecline={onDecline} />
  if (mailed) {
    return (
      <p role="status" className="text-sm text-slate-800">
        {t('invite.checkMail')}
      </p>
    )
  }

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    const email = String(form.get('email') ?? '')
    const password = String(form.get('password') ?? '')
    void run(async () => {
      const signIn = async () => {
        const { data } = await unwrap(api.POST('/v1/auth/login', { body: { email, password } }))
        await openSession(data.token)
      }
      if (mode === 'signin') await signIn()
      else {
        const { data } = await unwrap(api.POST('/v1/auth/register', { body: { name: String(form.get('name') ?? ''), email, password } }))
        if ('token' in data) await openSession(data.token)
        else if (data.confirmation === 'mail') {
          setMailed(true)
          return
        } else await signIn()
      }
      await accept()
    })
  }
  const fieldErrors = error instanceof ApiFailure ? (error.body.errors ?? {}) : {}
  return (
    <div className="flex flex-col gap-3">
      <fieldset className="flex gap-4 text-sm">
        <legend className="sr-only">{t('invite.title')}</legend>
        {(['register', 'signin'] as const).map((m) => (
          <label key={m} className="flex items-center gap-1.5">
            <input type="radio" name={modeName} checked={mode === m} onChange={() => setMode(m)} />
            {m === 'signin' ? t('invite.haveAccount') : t('invite.newAccount')}
          </label>
        ))}
      </fieldset>
      <form onSubmit={submit} className="flex flex-col gap-3" noValidate>
        {mode === 'register' ? <TextField label={t('invite.name')} name="name" autoComplete="name" required errors={fieldErrors.name} /> : null}
        <TextField label={t('invite.email')} name="email" type="email" autoComplete="username" required errors={fieldErrors.email} />
        <TextField
          label={t('invite.password')}
          name="password"
          type="password"
          autoComplete={mode === 'register' ? 'new-password' : 'current-password'}
          required
          hint={mode === 'register' ? t('invite.passwordHint') : undefined}
          errors={fieldErrors.password}
        />
        <CatalogError error={error} />
        <Button tone="primary" type="submit" disabled={busy}>
          {busy ? t('invite.accepting') : mode === 'signin' ? t('invite.signInAccept') : t('invite.registerAccept')}
        </Button>
        <Button onClick={onDecline} disabled={busy}>
          {t('invite.decline')}
        </Button>
      </form>
    </div>
  )
}

function SignedInAnswer({ busy, error, onAccept, onDecline }: { busy: boolean; error: unknown; onAccept: () => void; onDecline: () => void }) {
  const me = useQuery(whoamiQuery())
  const queryClient = useQueryClient()
  const signOut = async () => {
    await endSession()
    queryClient.removeQueries({ queryKey: queryKeys.whoami() })
  }
  return (
    <div className="flex flex-col gap-3">
      {me.data?.user ? <p className="text-sm text-slate-800">{t('invite.signedInAs', { email: me.data.user.email })}</p> : null}
      <CatalogError error={error} />
      <div className="flex flex-wrap gap-2">
        <Button tone="primary" onClick={onAccept} disabled={busy}>
          {busy ? t('invite.accepting') : t('invite.accept')}
        </Button>
        <Button onClick={onDecline} disabled={busy}>
          {t('invite.decline')}
        </Button>
      </div>
      <button type="button" onClick={signOut} className="self-start text-sm font-medium text-indigo-800 underline">
        {t('invite.signOutOther')}
      </button>
    </div>
  )
}
