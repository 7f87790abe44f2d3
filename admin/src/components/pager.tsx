import { t } from '../i18n'
import { Button } from './ui'

/** A pager's words: by default the asset library's ("Page 2 of 5 · 230 assets"). */
export type PagerText = { nav: string; previous: string; next: string; status: (page: number, pages: number, total: number) => string }

const assetPagerText = (): PagerText => ({
  nav: t('assets.page.nav'),
  previous: t('assets.page.previous'),
  next: t('assets.page.next'),
  status: (page, pages, total) => t('assets.page.status', { page, pages, total }),
})

/**
 * Previous / next through a paged list, with where the reader is ("Page 2 of 5 · 230 assets"); nothing when it all fits
 * on one page. `live`: the status is a polite live region (read out when the page changes).
 */
export function Pager({ page, perPage, total, onPage, text = assetPagerText(), live = true }: { page: number; perPage: number; total: number; onPage: (page: number) => void; text?: PagerText; live?: boolean }) {
  const pages = Math.max(1, Math.ceil(total / perPage))
  if (pages <= 1) return null
  return (
    <nav aria-label={text.nav} className="flex items-center gap-3 text-sm">
      <Button disabled={page <= 1} onClick={() => onPage(page - 1)}>
        {text.previous}
      </Button>
      <span aria-live={live ? 'polite' : undefined} data-testid="pager-status">
        {text.status(page, pages, total)}
      </span>
      <Button disabled={page >= pages} onClick={() => onPage(page + 1)}>
        {text.next}
      </Button>
    </nav>
  )
}
