import type { Blueprint } from '../stories/blocks'
import type { PublishedSnapshot } from '../stories/service'
import type { IndexDocument } from './engine'
import { storyText, wordsOf } from './text'

/** The search hit id: story id and locale (spec 2, "composed of story id and locale"). */
export const hitId = (storyId: number, lang: string) => `${storyId}:${lang}`

type Locale = PublishedSnapshot['locales'][number]

/**
 * One locale of a published snapshot as the index holds it: every field's distinct words, stop words included (a
 * posting is 4 bytes, so indexing them costs about a third more postings and lets a typo in a stop word find its
 * Stories). `updated_at` is when this snapshot was published (the public version's date; draft saves do not move it).
 */
export function searchDocument(story: PublishedSnapshot, locale: Locale, blueprints: Map<string, Blueprint>): IndexDocument {
  const text = storyText(locale.content, locale.name, blueprints)
  return {
    hit: {
      id: hitId(story.id, locale.lang),
      story_id: story.id,
      story_uuid: story.uuid,
      slug: story.slug,
      full_path: story.full_path,
      lang: locale.lang,
      headline: text.headline,
      lead: text.lead,
      status: 'published',
      updated_at: Math.floor(Date.parse(locale.published_at) / 1000),
    },
    fields: {
      headline: wordsOf(text.headline),
      lead: text.lead ? wordsOf(text.lead) : [],
      body_text: wordsOf(text.body),
      tags: wordsOf(text.tags.join(' ')),
      slug: wordsOf(story.slug),
      // The last segment is the slug, indexed once in the slug field; a full_path search looks in both (engine.ts).
      full_path: wordsOf(story.full_path.slice(0, story.full_path.length - story.slug.length)),
    },
    version: locale.version_no,
  }
}
