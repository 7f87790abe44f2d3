import { Elysia } from 'elysia'
import type { Guards } from '../../kernel/guards'
import { SearchParams, SearchQuery, SearchResponseModel } from './model'
import type { SearchRegistry } from './registry'
import { searchStories } from './service'

const DESCRIPTION = `Full-text search over the published Stories of a Space, one locale at a time (spec 4.4).

Fields by descending weight: headline, lead, body_text, tags, slug, full_path. Every query word must match; words of
up to 4 characters match exactly, 5 to 8 characters tolerate one typo, 9 or more two (a typo is a missing, extra or
wrong character, or two adjacent characters swapped); the last word also matches as the beginning of any longer word.
A stop word, or a word that only stands for stop words (a misspelt "the"), adds to the score but does not narrow.

Rate limit: 600 requests per minute per IP. The spec states both 60/min (route listing) and 600/min (search
description); search is driven by search-as-you-type boxes that send a request per pause in typing, one visitor easily
sends more than 60 in a minute, and many visitors share an IP behind NAT, while a query costs well under a
millisecond in memory — so the search description's 600/min, the public read surface's default, is the one applied.`

export function searchCdnRoutes(guards: Guards, registry: SearchRegistry) {
  return new Elysia({ prefix: '/cdn/:space', tags: ['Public search'] }).use(guards).get(
    '/search',
    async ({ space, query, set }) => {
      set.headers['cache-control'] = 'no-store'
      return searchStories(registry, space, query)
    },
    {
      publicSpace: true,
      params: SearchParams,
      query: SearchQuery,
      response: { 200: SearchResponseModel },
      detail: { summary: 'Search published Stories', description: DESCRIPTION },
    },
  )
}
