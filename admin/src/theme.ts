/**
 * Light and dark theme: the system's (`prefers-color-scheme`) unless the user chose one, remembered in this browser
 * (localStorage: a preference, never a credential). `<html data-theme>` is what styles.css keys the dark palette on.
 */
export type ThemeChoice = 'system' | 'light' | 'dark'

const KEY = 'content-service.theme'
const dark = () => matchMedia('(prefers-color-scheme: dark)')

export function themeChoice(): ThemeChoice {
  try {
    const v = localStorage.getItem(KEY)
    return v === 'light' || v === 'dark' ? v : 'system'
  } catch {
    return 'system'
  }
}

function apply(choice: ThemeChoice) {
  const isDark = choice === 'dark' || (choice === 'system' && dark().matches)
  document.documentElement.dataset.theme = isDark ? 'dark' : 'light'
}

export function setThemeChoice(choice: ThemeChoice) {
  try {
    if (choice === 'system') localStorage.removeItem(KEY)
    else localStorage.setItem(KEY, choice)
  } catch {
    // Storage refused (private mode): the choice holds for this page.
  }
  apply(choice)
  window.dispatchEvent(new Event(THEME_EVENT))
}

/** Fired after the choice changed (from the header's switch, the Account screen or the profile read at start). */
export const THEME_EVENT = 'admin:theme'

/** Before the first render: the remembered choice, and following the system while the choice is "system". */
export function initTheme() {
  apply(themeChoice())
  dark().addEventListener('change', () => apply(themeChoice()))
}
