import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate } from '@tanstack/react-router'
import { useEffect, useState } from 'react'
import { ApiFailure, api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'
import { setToken } from '../../auth'
import { endAdminSession } from '../../admin-session'
import { toast } from '../../components/toast'
import { SelectField, SettingsForm, SettingsPage, SettingsSection } from '../../components/settings-form'
import { Button, CatalogErrorRetry, Dialog, TextField } from '../../components/ui'
import { adoptLanguage, fieldErrors, LANGUAGES, t } from '../../i18n'
import { setThemeChoice, type ThemeChoice } from '../../theme'
import { meQuery } from './queries'

/** Account: the profile (name, UI language, theme; stored per user), the password, signing out everywhere. */
export function AccountScreen() {
  const me = useQuery(meQuery())
  return (
    <SettingsPage title={t('account.title')} query={me} className="mx-auto flex max-w-2xl flex-col gap-6">
      {(data) => (
        <>
          <ProfileForm me={data} />
          <PasswordForm />
          <SignOutEverywhere />
        </>
      )}
    </SettingsPage>
  )
}

type Me = NonNullable<ReturnType<typeof useQuery<Awaited<ReturnType<NonNullable<ReturnType<typeof meQuery>['queryFn']>>>>>['data']>

function ProfileForm({ me }: { me: Me }) {
  const queryClient = useQueryClient()
  const [name, setName] = useState(me.name ?? '')
  const [language, setLanguage] = useState(me.ui_language ?? '')
  const [theme, setTheme] = useState<ThemeChoice>(me.ui_theme ?? 'system')
  useEffect(() => setName(me.name ?? ''), [me.name])
  const save = useMutation({
    mutationFn: async () =>
      (await unwrap(api.PATCH('/v1/auth/me', { body: { name, ui_language: language || null, ui_theme: theme === 'system' ? null : theme } }))).data,
    onSuccess: async (data) => {
      queryClient.setQueryData(queryKeys.me(), data)
      await queryClient.invalidateQueries({ queryKey: queryKeys.whoami() })
      setThemeChoice(theme)
      // A new language: the page reloads in it (every screen reads its text once).
      if (adoptLanguage(data.ui_language)) location.reload()
      else toast(t('account.saved'))
    },
  })
  const errors = fieldErrors(save.error, { name: 'account.error.name', ui_language: 'account.error.language', ui_theme: 'account.error.theme' })
  return (
    <SettingsSection title={t('account.profile')}>
      <SettingsForm onSubmit={() => save.mutate()} error={Object.keys(errors).length ? null : save.error} submit={t('account.saveProfile')} pending={save.isPending}>
        <TextField label={t('account.name')} value={name} onChange={(e) => setName(e.target.value)} autoComplete="name" errors={errors.name} />
        <p className="text-sm text-slate-700">
          {t('account.email')} <strong>{me.email}</strong>
        </p>
        <SelectField label={t('account.language')} value={language} onChange={(e) => setLanguage(e.target.value)}>
          <option value="">{t('account.language.browser')}</option>
          {LANGUAGES.map((l) => (
            <option key={l.code} value={l.code} lang={l.code}>
              {l.name}
            </option>
          ))}
        </SelectField>
        <SelectField label={t('shell.theme')} value={theme} onChange={(e) => setTheme(e.target.value as ThemeChoice)}>
          <option value="system">{t('shell.theme.system')}</option>
          <option value="light">{t('shell.theme.light')}</option>
          <option value="dark">{t('shell.theme.dark')}</option>
        </SelectField>
      </SettingsForm>
    </SettingsSection>
  )
}

function PasswordForm() {
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const [repeat, setRepeat] = useState('')
  const [mismatch, setMismatch] = useState(false)
  const change = useMutation({
    mutationFn: async () => (await unwrap(api.POST('/v1/auth/password', { body: { current_password: current, new_password: next } }))).data,
    onSuccess: (data) => {
      setCurrent('')
      setNext('')
      setRepeat('')
      toast(t('account.passwordChanged', { count: data.revoked_sessions }))
    },
  })
  const errors = fieldErrors(change.error, { current_password: 'account.error.currentPassword', new_password: 'account.error.newPassword' })
  const submit = () => {
    const differ = next !== repeat
    setMismatch(differ)
    if (!differ) change.mutate()
  }
  return (
    <SettingsSection title={t('account.password')}>
      <SettingsForm
        onSubmit={submit}
        error={change.error instanceof ApiFailure && change.error.status === 422 ? null : change.error}
        submit={t('account.changePassword')}
        pending={change.isPending}
        disabled={!current || !next}
      >
        <TextField label={t('account.currentPassword')} type="password" autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} errors={errors.current_password} />
        <TextField
          label={t('account.newPassword')}
          type="password"
          autoComplete="new-password"
          value={next}
          onChange={(e) => setNext(e.target.value)}
          errors={errors.new_password}
          hint={t('account.newPasswordHint')}
        />
        <TextField
          label={t('account.repeatPassword')}
          type="password"
          autoComplete="new-password"
          value={repeat}
          onChange={(e) => setRepeat(e.target.value)}
          errors={mismatch ? [t('account.error.mismatch')] : undefined}
        />
      </SettingsForm>
    </SettingsSection>
  )
}

function SignOutEverywhere() {
  const [confirm, setConfirm] = useState(false)
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const run = useMutation({
    mutationFn: async () => (await unwrap(api.POST('/v1/auth/logout-everywhere'))).data,
    onSuccess: async () => {
      setConfirm(false)
      // The server ended every admin session; this clears the cookie.
      await endAdminSession()
      setToken(null)
      queryClient.clear()
      await navigate({ to: '/sign-in', search: {} })
    },
  })
  return (
    <SettingsSection title={t('account.sessions')}>
      <p className="text-sm text-slate-700">{t('account.sessionsText')}</p>
      <div>
        <Button tone="danger" onClick={() => setConfirm(true)}>
          {t('account.signOutEverywhere')}
        </Button>
      </div>
      <Dialog open={confirm} title={t('account.signOutEverywhere.confirm')} onClose={() => setConfirm(false)}>
        <p className="text-sm text-slate-700">{t('account.signOutEverywhere.text')}</p>
        {run.isError ? <CatalogErrorRetry error={run.error} /> : null}
        <div className="flex justify-end gap-2">
          <Button onClick={() => setConfirm(false)}>{t('common.cancel')}</Button>
          <Button tone="danger" onClick={() => run.mutate()} disabled={run.isPending}>
            {t('account.signOutEverywhere')}
          </Button>
        </div>
      </Dialog>
    </SettingsSection>
  )
}
