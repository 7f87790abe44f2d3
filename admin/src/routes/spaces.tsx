import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link, useNavigate } from '@tanstack/react-router'
import { type FormEvent, useState } from 'react'
import { ApiFailure, api, unwrap } from '../api/client'
import { spacesQuery } from '../api/queries'
import { Button, EmptyState, ErrorNotice, Loading, TextField } from '../components/ui'
import { fieldErrors, roleName, t } from '../i18n'
import { queryKeys } from '../api/keys'

/** The Spaces this user can reach, with their role; creating the first one is the next step of a new account. */
export function SpacesScreen() {
  const spaces = useQuery(spacesQuery())
  if (spaces.isPending) return <Loading what={t('spaces.loading')} />
  if (spaces.isError) return <ErrorNotice error={spaces.error} />
  const live = spaces.data.filter((s) => !s.archived)
  return (
    <div className="flex flex-col gap-6">
      <h1 className="text-2xl font-semibold">{t('spaces.title')}</h1>
      {live.length === 0 ? (
        <EmptyState title={t('spaces.empty')}>{t('spaces.emptyHint')}</EmptyState>
      ) : (
        <ul className="divide-y divide-slate-200 rounded-lg bg-white ring-1 ring-slate-200">
          {live.map((s) => (
            <li key={s.slug} className="flex items-center justify-between px-4 py-3">
              <Link to="/spaces/$space" params={{ space: s.slug }} search={{}} className="font-medium text-indigo-800 underline">
                {s.name}
              </Link>
              <span className="text-sm text-slate-700">
                {t('spaces.slugAndRole', { slug: s.slug })} <strong>{roleName(s.role)}</strong>
              </span>
            </li>
          ))}
        </ul>
      )}
      <CreateSpace />
    </div>
  )
}

/** A Space slug from its name: lower case ASCII letters, digits and dashes, starting with a letter (`Mein Café` → `mein-cafe`). */
export function slugify(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
  const slug = /^[a-z]/.test(base) ? base : base ? `s-${base}` : ''
  return slug.slice(0, 64).replace(/-+$/, '')
}

function CreateSpace() {
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const [errors, setErrors] = useState<Record<string, string[]>>({})
  const [name, setName] = useState('')
  const [slug, setSlug] = useState('')
  const [slugTouched, setSlugTouched] = useState(false)
  const create = useMutation({
    mutationFn: (body: { slug: string; name: string }) => unwrap(api.POST('/v1/spaces', { body })),
    onSuccess: async ({ data }) => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.spaces() })
      await navigate({ to: '/spaces/$space', params: { space: data.slug }, search: {} })
    },
    onError: (err) => setErrors(err instanceof ApiFailure ? fieldErrors(err, { slug: 'spaces.error.slug', name: 'spaces.error.name' }) : {}),
  })
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setErrors({})
    create.mutate({ name, slug })
  }
  return (
    <form onSubmit={submit} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200" noValidate>
      <h2 className="text-lg font-semibold">{t('spaces.new')}</h2>
      <TextField
        label={t('spaces.name')}
        name="name"
        required
        value={name}
        onChange={(e) => {
          setName(e.target.value)
          // The slug follows the name until the person edits it.
          if (!slugTouched) setSlug(slugify(e.target.value))
        }}
        errors={errors.name}
      />
      <TextField
        label={t('spaces.slug')}
        name="slug"
        required
        value={slug}
        onChange={(e) => {
          setSlug(e.target.value)
          setSlugTouched(true)
        }}
        hint={t('spaces.slugHint')}
        errors={errors.slug}
      />
      <ErrorNotice error={create.error} />
      <div>
        <Button tone="primary" type="submit" disabled={create.isPending}>
          {t('spaces.create')}
        </Button>
      </div>
    </form>
  )
}
