import { useQuery } from '@tanstack/react-query'
import { useMemo } from 'react'
import { localesQuery, spacesQuery, storyQuery } from '../../../api/queries'
import { BlockList, FallbackContext, TranslationContext } from '../../../components/block-editor'
import { Button, EmptyState } from '../../../components/ui'
import type { Blueprint } from '../../../fields/types'
import { t } from '../../../i18n'
import { asDoc, localeChain, NO_ERRORS } from './doc'
import type { StoryDraft } from './use-story-draft'

/**
 * The Space's locales and, for a locale without a translation, where its readers' values come from (the first
 * locale of its fallback chain with content) and that Story, shown read-only.
 */
export function useLocales(space: string, uuid: string, lang: string | undefined, draft: StoryDraft) {
  const spaces = useQuery(spacesQuery())
  const locales = spaces.data?.find((x) => x.slug === space)?.locales ?? []
  const localeList = useQuery({ ...localesQuery(space), enabled: locales.length > 1 })
  const primary = draft.primary.data
  const ownLang = (draft.story.data ?? primary)?.primary_lang
  const fallbackFrom =
    draft.missing && lang && primary && localeList.data
      ? localeChain(lang, localeList.data, primary.primary_lang).find((c) => c !== lang && (c === primary.primary_lang || primary.translations.includes(c)))
      : undefined
  const fallbackStory = useQuery({ ...storyQuery(space, uuid, fallbackFrom), enabled: fallbackFrom !== undefined && fallbackFrom !== ownLang })
  const fallbackSource = fallbackFrom === undefined ? undefined : fallbackFrom === ownLang ? primary : fallbackStory.data
  const translation = useMemo(() => (lang && ownLang && lang !== ownLang ? { lang, primary: ownLang } : null), [lang, ownLang])
  const fallback = useMemo(() => (lang && fallbackFrom ? { lang, from: fallbackFrom } : null), [lang, fallbackFrom])
  return { locales, list: localeList.data, fallbackFrom, fallbackSource, translation, fallback }
}

export type EditorLocales = ReturnType<typeof useLocales>

interface StoryLocales {
  primary_lang: string
  translations: string[]
}

/** The locale switcher: each locale with whether it has a translation, and what its readers get if not. */
export function LocaleBar({ story, lang, locales, onChange }: { story: StoryLocales; lang: string | undefined; locales: EditorLocales; onChange: (lang: string | undefined) => void }) {
  if (locales.locales.length <= 1) return null
  // For a locale without a translation: the locale its readers get instead.
  const shownFrom = (l: string) => {
    const from = locales.list
      ? localeChain(l, locales.list, story.primary_lang).find((c) => c !== l && (c === story.primary_lang || story.translations.includes(c)))
      : undefined
    return from ? t('editor.shows', { from }) : ''
  }
  return (
    <label className="flex items-center gap-1 text-sm">
      {t('editor.locale')}
      <select
        value={lang ?? story.primary_lang}
        onChange={(e) => onChange(e.target.value === story.primary_lang ? undefined : e.target.value)}
        className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm"
      >
        {locales.locales.map((l) => (
          <option key={l} value={l}>
            {l}
            {l === story.primary_lang ? t('editor.own') : story.translations.includes(l) ? '' : t('editor.noTranslationYet', { shows: shownFrom(l) })}
          </option>
        ))}
      </select>
    </label>
  )
}

/** A locale without a translation: what its readers get (read-only), and Start the translation from it. */
export function MissingTranslation({
  story,
  lang,
  locales,
  draft,
  canWrite,
  roots,
  blueprints,
}: {
  story: StoryLocales
  lang: string | undefined
  locales: EditorLocales
  draft: StoryDraft
  canWrite: boolean
  roots: Blueprint[]
  blueprints: Map<string, Blueprint>
}) {
  const { fallbackFrom, fallbackSource } = locales
  const startFrom = fallbackSource ?? draft.primary.data
  return (
    <>
      <EmptyState title={t('editor.noTranslation', { lang: lang ?? '' })}>
        <p>
          {t('editor.fallbackText', {
            lang: lang ?? '',
            from: fallbackFrom ?? story.primary_lang,
            chain: lang && locales.list ? `: ${localeChain(lang, locales.list, story.primary_lang).join(' → ')}` : '',
            primary: story.primary_lang,
          })}
        </p>
        {canWrite ? (
          <Button tone="primary" className="mt-3" onClick={() => draft.startTranslation(startFrom)} disabled={!startFrom}>
            {t('editor.startFrom', { from: fallbackFrom ?? story.primary_lang })}
          </Button>
        ) : null}
      </EmptyState>
      {fallbackSource && fallbackFrom ? (
        <section aria-label={t('editor.shownFrom', { from: fallbackFrom })} className="rounded-lg bg-slate-100 p-3" data-testid="fallback-preview">
          <p className="mb-2 text-sm text-slate-700">{t('editor.readersGet', { lang: lang ?? '' })}</p>
          <TranslationContext.Provider value={locales.translation}>
            <FallbackContext.Provider value={locales.fallback}>
              <fieldset disabled className="contents">
                <BlockList path="blocks" blocks={asDoc(fallbackSource.content).blocks} onChange={() => {}} allowed={roots} blueprints={blueprints} errors={NO_ERRORS} />
              </fieldset>
            </FallbackContext.Provider>
          </TranslationContext.Provider>
        </section>
      ) : null}
    </>
  )
}
