import { t } from '../i18n'
import { Button } from './ui'

/** Previous / next through a paged list, with where the reader is ("Page 2 of 5 · 230 assets"). */
export function Pager({ page, perPage, total, onPage }: { page: number; perPage: number; total: number; onPage: (page: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / perPage))
  if (pages <= 1) return null
  return (
    <nav aria-label={t('assets.page.nav')} className="flex items-center gap-3 text-sm">
      <Button disabled={page <= 1} onClick={() => onPage(page - 1)}>
        {t('assets.page.previous')}
      </Button>
      <span aria-live="polite" data-testid="pager-status">
        {t('assets.page.status', { page, pages, total })}
      </span>
      <Button disabled={page >= pages} onClick={() => onPage(page + 1)}>
        {t('assets.page.next')}
      </Button>
    </nav>
  )
}
