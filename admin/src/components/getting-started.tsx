import { useQuery } from '@tanstack/react-query'
import { Link } from '@tanstack/react-router'
import { useId, useState } from 'react'
import { componentsQuery, invitationsQuery, membersQuery, spacesQuery, spaceTokensQuery } from '../api/queries'
import { useCan } from '../api/roles'
import { t } from '../i18n'
import { Button } from './ui'

const KEY = (space: string) => `cs.gettingStarted.dismissed.${space}`

function dismissed(space: string): boolean {
  try {
    return localStorage.getItem(KEY(space)) === '1'
  } catch {
    return false
  }
}

/** What a site needs to read this Space with the SDK (code, not prose: it stays as it is in every language). */
export function sdkSnippet(origin: string, space: string): string {
  return [
    "import { createClient } from '@content-service/sdk'",
    '',
    `const client = createClient({ baseUrl: '${origin}', space: '${space}' })`,
    "const { story } = await client.story('home')",
  ].join('\n')
}

/**
 * A first-run panel on the Story tree for a Space's admin: create a blueprint, invite someone, connect the site (the SDK
 * snippet and the Space's public URLs; done with a Space token or a preview URL). Each step is ticked from the Space's own state; the panel
 * goes away once every step is done, or for good when dismissed (per Space, in this browser).
 */
export function GettingStarted({ space }: { space: string }) {
  const isAdmin = useCan(space, 'POST', '/v1/spaces/{space}/invitations')
  const [hidden, setHidden] = useState(() => dismissed(space))
  const enabled = isAdmin && !hidden
  const components = useQuery({ ...componentsQuery(space), enabled })
  const members = useQuery({ ...membersQuery(space), enabled })
  const invitations = useQuery({ ...invitationsQuery(space), enabled })
  const tokens = useQuery({ ...spaceTokensQuery(space), enabled })
  const spaces = useQuery({ ...spacesQuery(), enabled })
  const titleId = useId()
  if (!enabled || !components.data || !members.data || !invitations.data || !tokens.data || !spaces.data) return null
  const steps = [
    { key: 'blueprint', done: components.data.length > 0 },
    { key: 'invite', done: members.data.data.length > 1 || invitations.data.length > 0 },
    // A site is connected once it has a Space token (drafts, previews) or its preview URL is set.
    { key: 'connect', done: tokens.data.length > 0 || !!spaces.data.find((x) => x.slug === space)?.preview_url },
  ] as const
  if (steps.every((s) => s.done)) return null
  const origin = location.origin
  const dismiss = () => {
    try {
      localStorage.setItem(KEY(space), '1')
    } catch {
      // Private mode without storage: hidden for this visit only.
    }
    setHidden(true)
  }
  const linkClass = 'font-medium text-indigo-800 underline'
  return (
    <section aria-labelledby={titleId} className="flex flex-col gap-3 rounded-lg bg-indigo-50 p-4 ring-1 ring-indigo-200" data-testid="getting-started">
      <div className="flex items-start gap-3">
        <div className="flex-1">
          <h2 id={titleId} className="text-lg font-semibold text-slate-900">
            {t('start.title')}
          </h2>
          <p className="text-sm text-slate-800">{t('start.intro')}</p>
        </div>
        <Button onClick={dismiss}>{t('start.dismiss')}</Button>
      </div>
      <ol className="flex flex-col gap-3 text-sm">
        {steps.map((s) => (
          <li key={s.key} data-step={s.key} data-done={s.done} className="flex gap-2">
            <span aria-hidden="true" className={s.done ? 'text-emerald-700' : 'text-slate-500'}>
              {s.done ? '✓' : '○'}
            </span>
            <div className="min-w-0 flex-1">
              <p className="font-medium text-slate-900">
                {t(`start.${s.key}`)} {s.done ? <span className="text-emerald-800">{t('start.done')}</span> : null}
              </p>
              {s.key === 'blueprint' ? (
                <p>
                  {t('start.blueprintText')}{' '}
                  <Link to="/spaces/$space/components" params={{ space }} className={linkClass}>
                    {t('start.blueprintLink')}
                  </Link>
                </p>
              ) : null}
              {s.key === 'invite' ? (
                <p>
                  {t('start.inviteText')}{' '}
                  <Link to="/spaces/$space/members" params={{ space }} className={linkClass}>
                    {t('start.inviteLink')}
                  </Link>
                </p>
              ) : null}
              {s.key === 'connect' ? (
                <div className="flex flex-col gap-2">
                  <p>
                    {t('start.connectText')}{' '}
                    <Link to="/spaces/$space/tokens" params={{ space }} className={linkClass}>
                      {t('start.connectLink')}
                    </Link>
                  </p>
                  <p className="text-slate-700">{t('start.snippet')}</p>
                  <pre className="max-w-full rounded-md bg-slate-900 p-3 text-xs break-all whitespace-pre-wrap text-slate-100">
                    <code>{sdkSnippet(origin, space)}</code>
                  </pre>
                  <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1">
                    <dt className="text-slate-700">{t('start.storiesUrl')}</dt>
                    <dd className="min-w-0 font-mono text-xs break-all">{`${origin}/v1/cdn/${space}/stories`}</dd>
                    <dt className="text-slate-700">{t('start.graphqlUrl')}</dt>
                    <dd className="min-w-0 font-mono text-xs break-all">{`${origin}/v1/graphql`}</dd>
                  </dl>
                </div>
              ) : null}
            </div>
          </li>
        ))}
      </ol>
    </section>
  )
}
