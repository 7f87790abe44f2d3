import { Link, useParams } from '@tanstack/react-router'
import { ApiFailure } from '../api/client'
import { errorText, t } from '../i18n'
import type { MessageKey } from '../i18n/en'

const LIMITS = new Set(['spaces', 'stories_per_space', 'asset_bytes', 'members_per_space', 'requests_per_month'])

/**
 * A failure as a sentence in the UI's language (the API's error code through the catalog, else its message). A 402
 * plan_limit names the limit that was reached and links to the Space's Billing screen.
 */
export function CatalogError({ error }: { error: unknown }) {
  const { space } = useParams({ strict: false }) as { space?: string }
  if (!error) return null
  const limit = error instanceof ApiFailure && error.status === 402 ? String(error.body.details?.limit ?? '') : ''
  return (
    <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 ring-1 ring-red-200" data-error={error instanceof ApiFailure ? error.body.error : undefined}>
      {limit && LIMITS.has(limit) ? t('error.plan_limit.which', { limit: t(`billing.limit.${limit}` as MessageKey) }) : errorText(error)}
      {error instanceof ApiFailure && error.status === 402 && space ? (
        <>
          {' '}
          <Link to="/spaces/$space/billing" params={{ space }} className="font-medium underline">
            {t('billing.see')}
          </Link>
        </>
      ) : null}
    </p>
  )
}
