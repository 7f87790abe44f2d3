import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { getRouteApi, useNavigate } from '@tanstack/react-router'
import { type FormEvent, useId, useState } from 'react'
import { api, unwrap } from '../api/client'
import { invitationsQuery, membersQuery, rolesQuery, whoamiQuery } from '../api/queries'
import { ROLE_OPTIONS, type Role } from '../api/roles'
import { CatalogError } from '../components/catalog-error'
import { Notice } from '../components/notice'
import { Button, CatalogErrorRetry, Dialog, Skeleton, TextField } from '../components/ui'
import { formatDateTime, language, roleName, t } from '../i18n'
import { queryKeys } from '../api/keys'

const route = getRouteApi('/app/spaces/$space/members')

const SELECT = 'rounded-md border border-slate-300 bg-white px-2 py-1 text-sm'

/** Members (roles, change, remove), pending invitations (resend, revoke), inviting by e-mail, and the roles table. */
export function MembersScreen() {
  const { space } = route.useParams()
  const [notice, setNotice] = useState<string | null>(null)
  return (
    <section className="flex flex-col gap-6" aria-labelledby="members-title">
      <header>
        <h1 id="members-title" tabIndex={-1} className="text-xl font-semibold">
          {t('members.title')}
        </h1>
        <p className="text-sm text-slate-700">{t('members.intro')}</p>
      </header>
      <Notice text={notice} />
      <InviteForm space={space} onDone={setNotice} />
      <MemberList space={space} onDone={setNotice} />
      <Invitations space={space} onDone={setNotice} />
      <RolesTable space={space} />
    </section>
  )
}

function InviteForm({ space, onDone }: { space: string; onDone: (text: string) => void }) {
  const queryClient = useQueryClient()
  const roleId = useId()
  const [role, setRole] = useState<Role>('editor')
  const invite = useMutation({
    mutationFn: (email: string) => unwrap(api.POST('/v1/spaces/{space}/invitations', { params: { path: { space } }, body: { email, role } })),
    onSuccess: async ({ data }, _email) => {
      onDone(t('members.inviteSent', { email: data.email }))
      await queryClient.invalidateQueries({ queryKey: queryKeys.invitations(space) })
    },
  })
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = e.currentTarget
    const email = String(new FormData(form).get('email') ?? '').trim()
    invite.mutate(email, { onSuccess: () => form.reset() })
  }
  const errors = invite.error && 'body' in invite.error ? (invite.error as { body: { errors?: Record<string, string[]> } }).body.errors : undefined
  return (
    <form onSubmit={submit} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200" noValidate aria-labelledby="invite-title">
      <h2 id="invite-title" className="text-base font-semibold">
        {t('members.invite')}
      </h2>
      <div className="flex flex-wrap items-end gap-3">
        <div className="min-w-64 flex-1">
          <TextField label={t('members.inviteEmail')} name="email" type="email" autoComplete="off" required errors={errors?.email} />
        </div>
        <div className="flex flex-col gap-1">
          <label htmlFor={roleId} className="text-sm font-medium text-slate-800">
            {t('members.inviteRole')}
          </label>
          <select id={roleId} value={role} onChange={(e) => setRole(e.target.value as Role)} className={SELECT}>
            {ROLE_OPTIONS.map((r) => (
              <option key={r} value={r}>
                {roleName(r)} — {t(`roles.${r}.hint`)}
              </option>
            ))}
          </select>
        </div>
        <Button tone="primary" type="submit" disabled={invite.isPending}>
          {t('members.inviteSend')}
        </Button>
      </div>
      <CatalogError error={invite.error} />
    </form>
  )
}

type Member = { user: { id: number; name: string; email: string }; role: Role; joined_at: string }

function MemberList({ space, onDone }: { space: string; onDone: (text: string) => void }) {
  const queryClient = useQueryClient()
  const members = useQuery(membersQuery(space))
  const me = useQuery(whoamiQuery())
  const navigate = useNavigate()
  const [removing, setRemoving] = useState<Member | null>(null)
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: queryKeys.members(space) }),
      queryClient.invalidateQueries({ queryKey: queryKeys.whoami() }),
    ])
  const change = useMutation({
    mutationFn: ({ m, role }: { m: Member; role: Role }) =>
      unwrap(api.PATCH('/v1/spaces/{space}/members/{userId}', { params: { path: { space, userId: String(m.user.id) } }, body: { role } })),
    onSuccess: async ({ data }) => {
      onDone(t('members.roleChanged', { name: data.user.name, role: roleName(data.role) }))
      await refresh()
    },
    // The select shows the role the server keeps.
    onError: () => refresh(),
  })
  const remove = useMutation({
    mutationFn: (m: Member) =>
      unwrap(api.DELETE('/v1/spaces/{space}/members/{userId}', { params: { path: { space, userId: m.user.id === me.data?.user?.id ? 'me' : String(m.user.id) } } })),
    onSuccess: async (_data, m) => {
      setRemoving(null)
      // Leaving: this Space is gone for the caller; back to the list of Spaces.
      if (m.user.id === me.data?.user?.id) {
        queryClient.clear()
        await navigate({ to: '/' })
        return
      }
      onDone(t('members.removed', { name: m.user.name }))
      await refresh()
    },
  })
  if (members.isPending) return <Skeleton lines={4} />
  if (members.isError) return <CatalogErrorRetry error={members.error} onRetry={() => members.refetch()} />
  return (
    <div className="flex flex-col gap-2">
      <CatalogError error={change.error} />
      <div className="overflow-x-auto rounded-lg bg-white ring-1 ring-slate-200">
        <table className="w-full text-left text-sm">
          <caption className="sr-only">{t('members.title')}</caption>
          <thead className="bg-slate-50 text-slate-700">
            <tr>
              <th scope="col" className="px-3 py-2">{t('members.name')}</th>
              <th scope="col" className="px-3 py-2">{t('members.email')}</th>
              <th scope="col" className="px-3 py-2">{t('members.role')}</th>
              <th scope="col" className="px-3 py-2">{t('members.joined')}</th>
              <th scope="col" className="px-3 py-2">{t('members.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {members.data.data.map((m) => {
              const self = m.user.id === me.data?.user?.id
              return (
                <tr key={m.user.id} className="border-t border-slate-200" data-member={m.user.email}>
                  <td className="px-3 py-2 font-medium">
                    {m.user.name}
                    {self ? <span className="ml-1 text-slate-600">({t('common.you')})</span> : null}
                  </td>
                  <td className="px-3 py-2">{m.user.email}</td>
                  <td className="px-3 py-2">
                    <select
                      aria-label={t('members.roleOf', { name: m.user.name })}
                      value={m.role}
                      disabled={change.isPending}
                      onChange={(e) => change.mutate({ m: m as Member, role: e.target.value as Role })}
                      className={SELECT}
                    >
                      {ROLE_OPTIONS.map((r) => (
                        <option key={r} value={r}>
                          {roleName(r)}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td className="px-3 py-2 text-slate-700">{formatDateTime(m.joined_at)}</td>
                  <td className="px-3 py-2">
                    <Button tone="danger" aria-label={self ? undefined : t('members.removeOf', { name: m.user.name })} onClick={() => setRemoving(m as Member)}>
                      {self ? t('members.leave') : t('members.remove')}
                    </Button>
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
      <Dialog
        open={removing !== null}
        title={removing ? t('members.removeTitle', { name: removing.user.name }) : ''}
        onClose={() => {
          setRemoving(null)
          remove.reset()
        }}
      >
        {removing ? (
          <>
            <p className="text-sm text-slate-800">{t('members.removeBody', { name: removing.user.name })}</p>
            <CatalogError error={remove.error} />
            <div className="flex justify-end gap-2">
              <Button
                onClick={() => {
                  setRemoving(null)
                  remove.reset()
                }}
              >
                {t('common.cancel')}
              </Button>
              <Button tone="danger" disabled={remove.isPending} onClick={() => remove.mutate(removing)}>
                {removing.user.id === me.data?.user?.id ? t('members.leave') : t('members.remove')}
              </Button>
            </div>
          </>
        ) : null}
      </Dialog>
    </div>
  )
}

function Invitations({ space, onDone }: { space: string; onDone: (text: string) => void }) {
  const queryClient = useQueryClient()
  const list = useQuery(invitationsQuery(space))
  const refresh = () => queryClient.invalidateQueries({ queryKey: queryKeys.invitations(space) })
  const resend = useMutation({
    mutationFn: (id: number) => unwrap(api.POST('/v1/spaces/{space}/invitations/{id}/resend', { params: { path: { space, id } } })),
    onSuccess: async ({ data }) => {
      onDone(t('members.resent', { email: data.email }))
      await refresh()
    },
  })
  const revoke = useMutation({
    mutationFn: (inv: { id: number; email: string }) =>
      unwrap(api.DELETE('/v1/spaces/{space}/invitations/{id}', { params: { path: { space, id: inv.id } } })),
    onSuccess: async (_d, inv) => {
      onDone(t('members.revoked', { email: inv.email }))
      await refresh()
    },
  })
  return (
    <section aria-labelledby="pending-title" className="flex flex-col gap-2">
      <h2 id="pending-title" className="text-base font-semibold">
        {t('members.pending')}
      </h2>
      {list.isPending ? <Skeleton lines={2} /> : null}
      {list.isError ? <CatalogErrorRetry error={list.error} onRetry={() => list.refetch()} /> : null}
      <CatalogError error={resend.error ?? revoke.error} />
      {list.data && list.data.length === 0 ? <p className="text-sm text-slate-700">{t('members.noPending')}</p> : null}
      <ul className="flex flex-col gap-2">
        {(list.data ?? []).map((inv) => (
          <li key={inv.id} data-invitation={inv.email} className="flex flex-wrap items-center gap-3 rounded-lg bg-white px-3 py-2 text-sm ring-1 ring-slate-200">
            <span className="font-medium">{inv.email}</span>
            <span>{roleName(inv.role)}</span>
            {inv.invited_by ? <span className="text-slate-700">{t('members.invitedBy', { name: inv.invited_by.name })}</span> : null}
            <span className="text-slate-700">
              {t('members.expires')}: {formatDateTime(inv.expires_at)}
            </span>
            <span className="ml-auto flex gap-2">
              <Button aria-label={t('members.resendTo', { email: inv.email })} disabled={resend.isPending} onClick={() => resend.mutate(inv.id)}>
                {t('members.resend')}
              </Button>
              <Button tone="danger" aria-label={t('members.revokeTo', { email: inv.email })} disabled={revoke.isPending} onClick={() => revoke.mutate(inv)}>
                {t('members.revoke')}
              </Button>
            </span>
          </li>
        ))}
      </ul>
    </section>
  )
}

function RolesTable({ space }: { space: string }) {
  const roles = useQuery(rolesQuery(space))
  return (
    <section aria-labelledby="roles-title" className="flex flex-col gap-2">
      <h2 id="roles-title" className="text-base font-semibold">
        {t('members.rolesTable')}
      </h2>
      {roles.isPending ? <Skeleton lines={3} /> : null}
      {roles.isError ? <CatalogErrorRetry error={roles.error} onRetry={() => roles.refetch()} /> : null}
      {(roles.data ?? []).map((r) => (
        <details key={r.role} className="rounded-lg bg-white px-3 py-2 text-sm ring-1 ring-slate-200">
          <summary className="cursor-pointer font-medium">
            {roleName(r.role)} — {t(`roles.${r.role}.hint`)} ({r.operations.length})
          </summary>
          {/* The API describes roles and operations in English: shown as such in an English UI only (the hint above is the catalog's). */}
          {language === 'en' ? <p className="mt-2 text-slate-700">{r.description}</p> : null}
          <ul className="mt-2 max-h-64 overflow-y-auto font-mono text-xs text-slate-700">
            {r.operations.map((o) => (
              <li key={`${o.method} ${o.path}`}>
                {o.method} {o.path}
                {language === 'en' ? ` — ${o.summary}` : null}
              </li>
            ))}
          </ul>
        </details>
      ))}
    </section>
  )
}
