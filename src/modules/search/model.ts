import { t } from 'elysia'
import { PageNo, Int, intString, SpaceSlug } from '../../kernel/schemas'
import { defineError } from '../../kernel/errors'
import { SEARCH_FIELDS } from './text'

export const SearchParams = t.Object({ space: SpaceSlug })

export const SearchQuery = t.Object({
  q: t.String({ minLength: 1, maxLength: 256, error: 'is required: 1 to 256 characters' }),
  lang: t.Optional(t.String({ minLength: 1, maxLength: 35, error: 'must be a BCP-47 language tag' })),
  per_page: t.Optional(intString(1, 50, { description: 'Hits per page, 1 to 50 (default 20)' })),
  page: t.Optional(PageNo),
  attributes: t.Optional(
    t.String({
      maxLength: 200,
      error: `must be a comma-separated list of ${SEARCH_FIELDS.join(', ')}`,
      description: `Comma-separated fields to search, any of ${SEARCH_FIELDS.join(', ')} (default: all).`,
    }),
  ),
})

export const SearchHitModel = t.Object({
  id: t.String({ description: 'Story id and locale, e.g. 42:en' }),
  story_id: Int(),
  story_uuid: t.String({ format: 'uuid' }),
  slug: t.String(),
  full_path: t.String(),
  lang: t.String(),
  headline: t.String({ description: 'First headline/title text field of the published content, else the Story name' }),
  lead: t.Union([t.String(), t.Null()], { description: 'First lead/intro/teaser/summary text field, else null' }),
  status: t.String({ description: 'Always published: only published Stories are searchable' }),
  updated_at: Int({ description: 'When this version was published, Unix seconds' }),
})

export const SearchResponseModel = t.Object({
  data: t.Array(SearchHitModel),
  meta: t.Object({ total: Int(), query_time_ms: Int(), page: Int(), per_page: Int() }),
})

export const SearchErrors = {
  indexWarming: defineError(
    'index_warming',
    503,
    'The search index of this Space is being built (the first seconds after a start); retry after Retry-After seconds.',
  ),
}
