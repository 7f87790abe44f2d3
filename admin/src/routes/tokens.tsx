import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi } from '@tanstack/react-router'
import { type FormEvent, useId, useState } from 'react'
import { ApiFailure, api, unwrap } from '../api/client'
import { spaceTokensQuery } from '../api/queries'
import { ROLE_OPTIONS, type Role } from '../api/roles'
import { CatalogError } from '../components/catalog-error'
import { Notice } from '../components/notice'
import { SecretOnceDialog, type ShownSecret } from '../components/secret-once'
import { Button, CatalogErrorRetry, Dialog, Skeleton, TextField } from '../components/ui'
import { formatDateTime, roleName, t } from '../i18n'
import { queryKeys } from '../api/keys'

const route = getRouteApi('/app/spaces/$space/tokens')

const SELECT = 'rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm'

type SpaceToken = { id: string; name: string; role: Role; created_at: string; expires_at: string | null; last_used_at: string | null }

/** Space tokens: create (name, role, optional expiry) with the secret shown once, the list with last use, revoke. */
export function TokensScreen() {
  const { space } = route.useParams()
  const queryClient = useQueryClient()
  const tokens = useQuery(spaceTokensQuery(space))
  const [notice, setNotice] = useState<string | null>(null)
  const [secret, setSecret] = useState<ShownSecret | null>(null)
  const [revoking, setRevoking] = useState<SpaceToken | null>(null)
  const refresh = () => queryClient.invalidateQueries({ queryKey: queryKeys.tokens(space) })

  const revoke = useMutation({
    mutationFn: (tok: SpaceToken) => unwrap(api.DELETE('/v1/spaces/{space}/tokens/{id}', { params: { path: { space, id: tok.id } } })),
    onSuccess: async (_d, tok) => {
      setRevoking(null)
      // The list first, then the notice: what it says is on screen when it is read.
      await refresh()
      setNotice(t('tokens.revoked', { name: tok.name }))
    },
  })
  const closeRevoke = () => {
    setRevoking(null)
    revoke.reset()
  }

  return (
    <section className="flex flex-col gap-6" aria-labelledby="tokens-title">
      <header>
        <h1 id="tokens-title" tabIndex={-1} className="text-xl font-semibold">
          {t('tokens.title')}
        </h1>
        <p className="text-sm text-slate-700">{t('tokens.intro')}</p>
      </header>
      <Notice text={notice} />
      <CreateToken
        space={space}
        onCreated={async (created) => {
          setSecret({ name: created.name, value: created.token })
          await refresh()
        }}
      />
      {tokens.isPending ? <Skeleton lines={4} /> : null}
      {tokens.isError ? <CatalogErrorRetry error={tokens.error} onRetry={() => tokens.refetch()} /> : null}
      {tokens.data && tokens.data.length === 0 ? <p className="text-sm text-slate-700">{t('tokens.empty')}</p> : null}
      {tokens.data && tokens.data.length > 0 ? (
        <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{t('tokens.title')}</caption>
            <thead className="bg-slate-50 text-slate-700">
              <tr>
                <th scope="col" className="px-3 py-2">{t('tokens.name')}</th>
                <th scope="col" className="px-3 py-2">{t('tokens.role')}</th>
                <th scope="col" className="px-3 py-2">{t('tokens.created')}</th>
                <th scope="col" className="px-3 py-2">{t('tokens.lastUsed')}</th>
                <th scope="col" className="px-3 py-2">{t('tokens.expiresCol')}</th>
                <th scope="col" className="px-3 py-2"><span className="sr-only">{t('tokens.revoke')}</span></th>
              </tr>
            </thead>
            <tbody>
              {tokens.data.map((tok) => {
                const expired = tok.expires_at !== null && Date.parse(tok.expires_at) <= Date.now()
                return (
                  <tr key={tok.id} className="border-t border-slate-200" data-token={tok.name}>
                    <td className="px-3 py-2 font-medium">{tok.name}</td>
                    <td className="px-3 py-2">{roleName(tok.role)}</td>
                    <td className="px-3 py-2 text-slate-700">{formatDateTime(tok.created_at)}</td>
                    <td className="px-3 py-2 text-slate-700">{tok.last_used_at ? formatDateTime(tok.last_used_at) : t('common.never')}</td>
                    <td className="px-3 py-2 text-slate-700">
                      {tok.expires_at ? formatDateTime(tok.expires_at) : t('common.never')}
                      {expired ? <span className="ml-1 font-medium text-red-800">({t('tokens.expired')})</span> : null}
                    </td>
                    <td className="px-3 py-2 text-right">
                      <Button tone="danger" aria-label={t('tokens.revokeOf', { name: tok.name })} onClick={() => setRevoking(tok as SpaceToken)}>
                        {t('tokens.revoke')}
                      </Button>
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      ) : null}

      <SecretOnceDialog
        secret={secret}
        onClose={() => setSecret(null)}
        text={{ title: 'tokens.secretTitle', once: 'tokens.secretOnce', label: 'tokens.secretLabel' }}
        testId="token-secret"
      />

      <Dialog open={revoking !== null} title={revoking ? t('tokens.revokeTitle', { name: revoking.name }) : ''} onClose={closeRevoke}>
        {revoking ? (
          <>
            <p className="text-sm text-slate-800">{t('tokens.revokeBody')}</p>
            <CatalogError error={revoke.error} />
            <div className="flex justify-end gap-2">
              <Button onClick={closeRevoke}>{t('common.cancel')}</Button>
              <Button tone="danger" disabled={revoke.isPending} onClick={() => revoke.mutate(revoking)}>
                {t('tokens.revoke')}
              </Button>
            </div>
          </>
        ) : null}
      </Dialog>
    </section>
  )
}

function CreateToken({ space, onCreated }: { space: string; onCreated: (c: { name: string; token: string }) => void }) {
  const roleId = useId()
  const [role, setRole] = useState<Role>('viewer')
  const create = useMutation({
    mutationFn: (body: { name: string; role: Role; expires_at?: string }) => unwrap(api.POST('/v1/spaces/{space}/tokens', { params: { path: { space } }, body })),
  })
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = e.currentTarget
    const data = new FormData(form)
    const expires = String(data.get('expires_at') ?? '')
    // <input type=datetime-local> is local time without an offset: the API wants an instant.
    const body = { name: String(data.get('name') ?? ''), role, ...(expires ? { expires_at: new Date(expires).toISOString() } : {}) }
    create.mutate(body, {
      onSuccess: ({ data: created }) => {
        form.reset()
        onCreated({ name: created.name, token: created.token })
      },
    })
  }
  const errors = create.error instanceof ApiFailure ? (create.error.body.errors ?? {}) : {}
  return (
    <form onSubmit={submit} noValidate aria-labelledby="new-token-title" className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200">
      <h2 id="new-token-title" className="text-base font-semibold">
        {t('tokens.create')}
      </h2>
      <div className="flex flex-wrap items-start gap-3">
        <div className="min-w-56 flex-1">
          <TextField label={t('tokens.name')} name="name" required maxLength={200} hint={t('tokens.nameHint')} errors={errors.name} />
        </div>
        <div className="flex flex-col gap-1">
          <label htmlFor={roleId} className="text-sm font-medium text-slate-800">
            {t('tokens.role')}
          </label>
          <select id={roleId} value={role} onChange={(e) => setRole(e.target.value as Role)} className={SELECT}>
            {ROLE_OPTIONS.map((r) => (
              <option key={r} value={r}>
                {roleName(r)} — {t(`roles.${r}.hint`)}
              </option>
            ))}
          </select>
        </div>
        <div>
          <TextField label={t('tokens.expires')} name="expires_at" type="datetime-local" hint={t('tokens.expiresHint')} errors={errors.expires_at} />
        </div>
      </div>
      <CatalogError error={create.error} />
      <div>
        <Button tone="primary" type="submit" disabled={create.isPending}>
          {t('tokens.submit')}
        </Button>
      </div>
    </form>
  )
}
