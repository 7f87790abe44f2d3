import { useQuery } from '@tanstack/react-query'
import { useEffect } from 'react'
import { adoptLanguage } from '../../i18n'
import { setThemeChoice, themeChoice } from '../../theme'
import { meQuery } from './queries'

/**
 * The profile's language and theme (stored per user by the API) follow the user into every browser: once the
 * profile is read, a chosen theme is applied, and a language other than the page's reloads it in that language.
 */
export function ProfileSync() {
  const me = useQuery(meQuery())
  const data = me.data
  useEffect(() => {
    if (!data || data.id === null) return
    if (data.ui_theme && data.ui_theme !== themeChoice()) setThemeChoice(data.ui_theme)
    if (adoptLanguage(data.ui_language)) location.reload()
  }, [data])
  return null
}
