import { KernelErrors } from '../../kernel/errors'
import { canonicalLocale } from '../../kernel/locale'
import { parseQuery, type SearchHit, type SearchIndex } from './engine'
import type { SearchRegistry } from './registry'
import { SEARCH_FIELDS, type SearchField, stopWordsFor } from './text'

export const SEARCH_PAGE = { perPage: 20, max: 50 }
export const MAX_QUERY_LENGTH = 256

/** What the search needs of a Space: its id and locales (the public read's cached Space settings fit). */
export interface SearchSpace {
  id: number
  defaultLang: string
  codes: string[]
}

export interface SearchInput {
  q: string
  lang?: string
  per_page?: number
  page?: number
  attributes?: string
}

export interface SearchResult {
  data: SearchHit[]
  meta: { total: number; query_time_ms: number; page: number; per_page: number }
}

/** Search answers are never cached, errors included (spec 4.4: "not cached"). */
export const NO_STORE = { 'Cache-Control': 'no-store' }

const invalid = (fields: Record<string, string[]>) => KernelErrors.validationFailed('The request is not valid.', fields, NO_STORE)

function fieldsOf(attributes: string | undefined): readonly SearchField[] {
  if (attributes === undefined) return SEARCH_FIELDS
  const names = attributes
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean)
  const unknown = names.filter((n) => !(SEARCH_FIELDS as readonly string[]).includes(n))
  if (unknown.length || !names.length) {
    throw invalid({
      attributes: [
        unknown.length
          ? `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u.slice(0, 40)}"`).join(', ')}; searchable fields are ${SEARCH_FIELDS.join(', ')}`
          : `must name at least one of ${SEARCH_FIELDS.join(', ')}`,
      ],
    })
  }
  return SEARCH_FIELDS.filter((f) => names.includes(f))
}

/** A search request checked and normalised: what its answer depends on, besides the index. */
export interface SearchParamsChecked {
  q: string
  lang: string
  perPage: number
  page: number
  fields: readonly SearchField[]
}

/** Checks a search request against the Space (422 `validation_failed` naming the parameter) and normalises it. */
export function checkSearch(space: SearchSpace, input: SearchInput): SearchParamsChecked {
  const q = input.q
  if (typeof q !== 'string' || !q.trim() || q.length > MAX_QUERY_LENGTH) {
    throw invalid({ q: [`is required: 1 to ${MAX_QUERY_LENGTH} characters, not only spaces`] })
  }
  let lang = space.defaultLang
  if (input.lang !== undefined) {
    const c = canonicalLocale(input.lang)
    if (!c) throw invalid({ lang: [`"${input.lang.slice(0, 40)}" is not a valid BCP-47 language tag`] })
    if (!space.codes.includes(c)) throw invalid({ lang: [`"${c}" is not one of this Space's locales (${space.codes.join(', ')})`] })
    lang = c
  }
  const perPage = input.per_page ?? SEARCH_PAGE.perPage
  const page = input.page ?? 1
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > SEARCH_PAGE.max) {
    throw invalid({ per_page: [`must be an integer from 1 to ${SEARCH_PAGE.max}`] })
  }
  if (!Number.isInteger(page) || page < 1) throw invalid({ page: ['must be a positive integer'] })
  return { q, lang, perPage, page, fields: fieldsOf(input.attributes) }
}

/** The answer of a checked search in `index` (null: no published Story in that locale). `t0`: when the request began. */
export function searchIn(index: SearchIndex | null, p: SearchParamsChecked, t0: number): SearchResult {
  const result = index
    ? index.search(parseQuery(p.q), { fields: p.fields, offset: (p.page - 1) * p.perPage, limit: p.perPage, optional: stopWordsFor(p.lang) })
    : { total: 0, hits: [] }
  return {
    data: result.hits,
    meta: { total: result.total, query_time_ms: Math.round(performance.now() - t0), page: p.page, per_page: p.perPage },
  }
}

/**
 * Full-text search over a Space's published Stories in one locale (spec 4.4). Every query word must match (in any of
 * the fields searched), within its typo budget; stop words only add to the score when the query has other words.
 */
export async function searchStories(registry: SearchRegistry, space: SearchSpace, input: SearchInput): Promise<SearchResult> {
  const t0 = performance.now()
  const p = checkSearch(space, input)
  let index = await registry.index(space.id, p.lang)
  // Evicted and released between that answer and this line (another load's eviction ran in between): ask again.
  while (index?.released) index = await registry.index(space.id, p.lang)
  return searchIn(index, p, t0)
}
