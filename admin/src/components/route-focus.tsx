import { useRouter } from '@tanstack/react-router'
import { useEffect } from 'react'
import { t } from '../i18n'

/** The screen's heading: the first `<h1>` in the page's `<main>`. */
const heading = () => document.querySelector<HTMLElement>('main h1')

function focusHeading(h: HTMLElement) {
  if (!h.hasAttribute('tabindex')) h.tabIndex = -1
  h.focus()
}

/**
 * After each navigation: `document.title` becomes the new screen's heading (so every route has its own title, in the
 * UI's language), and focus moves to that heading, unless the user already moved it on (into the new screen). The
 * heading may come with the screen's data, so it is waited for (a few seconds at most).
 */
export function RouteFocus() {
  const router = useRouter()
  useEffect(() => {
    let stop = () => {}
    const follow = (moveFocus: boolean) => {
      stop()
      const before = document.activeElement
      let last: string | null = null
      const started = performance.now()
      let frame = 0
      const tick = () => {
        const h = heading()
        if (h?.textContent) {
          const text = h.textContent.trim()
          if (text !== last) {
            last = text
            document.title = t('shell.title', { screen: text })
          }
          const now = document.activeElement
          if (moveFocus && (now === before || now === document.body || now === null || !now.isConnected)) {
            focusHeading(h)
            moveFocus = false
          }
        }
        // The heading's text may still change (a Story's name once it loads): follow it a little longer.
        if (performance.now() - started < 5000) frame = requestAnimationFrame(tick)
      }
      frame = requestAnimationFrame(tick)
      stop = () => cancelAnimationFrame(frame)
    }
    // The first load keeps focus at the top of the page (the skip link is the first Tab stop); later paths move it.
    let path = router.state.location.pathname
    follow(false)
    const off = router.subscribe('onResolved', (e) => {
      if (e.toLocation.pathname === path) return
      path = e.toLocation.pathname
      follow(true)
    })
    return () => {
      off()
      stop()
    }
  }, [router])
  return null
}

/** The first stop of the Tab key: straight to the screen (its heading, else its `<main>`). */
export function SkipLink() {
  return (
    <a
      href="#main"
      onClick={(e) => {
        e.preventDefault()
        const target = heading() ?? document.querySelector<HTMLElement>('main')
        if (target) focusHeading(target)
      }}
      className="sr-only rounded bg-indigo-700 px-3 py-2 font-medium text-white focus:not-sr-only focus:fixed focus:top-2 focus:left-2 focus:z-50"
    >
      {t('shell.skip')}
    </a>
  )
}
