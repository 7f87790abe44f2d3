import { RE2JS } from 're2js'
import type { SegmentRule } from './tables'
import { MAX_LIST_VALUES, MAX_REGEX_LENGTH, type RuleOperator, type RuleType } from './model'

/**
 * Segment rules: checked and compiled once (at save, and again when a Space's segments are loaded into memory), then
 * evaluated against the request's signals on every public read. Regexes run on re2js, a linear-time engine (no
 * backtracking), so a hostile pattern cannot stall reads. Linear is still input length × program size, so both are
 * bounded: request values are cut at MAX_SIGNAL_LENGTH, patterns compile to at most MAX_PROGRAM_SIZE instructions
 * (checked at save), and one request spends at most REGEX_BUDGET units (characters × instructions) on regexes — a
 * regex rule past the budget does not match. Measured worst cases: about 0.5 µs per unit, so ≤ ~80 ms per request
 * with hostile values and the most complex patterns; typical values (a host, a campaign) cost a few hundred units.
 */

/** Longer request values are matched on their first this-many characters. */
export const MAX_SIGNAL_LENGTH = 512
/** re2js program size (instructions) a pattern may compile to: refuses `.{1000}` and the like at save. */
export const MAX_PROGRAM_SIZE = 300
/** Regex work per request, in characters × instructions: one evaluation of the largest pattern on the longest value. */
export const REGEX_BUDGET = MAX_SIGNAL_LENGTH * MAX_PROGRAM_SIZE

/** What a request tells about its visitor; each signal is read at most once, and only when a rule asks for it. */
export interface Signals {
  /** Whether country rules may match at all: the request came through a trusted proxy. */
  readonly countryTrusted: boolean
  one(type: Exclude<RuleType, 'language'>, key: string | undefined): string | null
  /** The primary language subtags of Accept-Language (q > 0) and of `?lang`. */
  languages(): string[]
  /** Takes `units` of the request's regex budget; false (nothing taken) when not enough is left. */
  spendRegex(units: number): boolean
}

export interface CompiledRule {
  type: RuleType
  operator: RuleOperator
  key: string | undefined
  /** Lower-cased comparison values (one for eq/neq/contains/starts_with). */
  values: string[]
  regex: RE2JS | null
  /** The regex's program size: the cost of one evaluation is value length × this. */
  regexSize: number
}

const NEGATIVE: Record<RuleOperator, boolean> = {
  eq: false,
  neq: true,
  in: false,
  not_in: true,
  contains: false,
  starts_with: false,
  regex: false,
}

/** Checks a segment's rules; errors keyed `rules/<i>/<field>` (empty when all are valid). */
export function ruleErrors(rules: SegmentRule[]): Record<string, string[]> {
  const errors: Record<string, string[]> = {}
  const add = (k: string, m: string) => (errors[k] ??= []).push(m)
  rules.forEach((r, i) => {
    const at = `rules/${i}`
    const list = r.operator === 'in' || r.operator === 'not_in'
    if (list) {
      if (!Array.isArray(r.value) || r.value.length < 1 || r.value.length > MAX_LIST_VALUES) {
        add(`${at}/value`, `must be an array of 1 to ${MAX_LIST_VALUES} strings for ${r.operator}`)
      }
    } else if (typeof r.value !== 'string') {
      add(`${at}/value`, `must be a string for ${r.operator}`)
    } else if (r.operator === 'regex') {
      const reason = regexError(r.value)
      if (reason) add(`${at}/value`, reason)
    }
    const keyed = r.type === 'cookie' || r.type === 'query'
    if (keyed && (r.key === undefined || r.key === '')) add(`${at}/key`, `is required for ${r.type} rules (the ${r.type === 'cookie' ? 'cookie' : 'query parameter'} name)`)
    if (!keyed && r.key !== undefined) add(`${at}/key`, 'is only for cookie and query rules')
  })
  return errors
}

/** Why a pattern is refused, or null: at most MAX_REGEX_LENGTH characters of RE2 syntax. */
export function regexError(pattern: string): string | null {
  if (pattern.length > MAX_REGEX_LENGTH) return `must be at most ${MAX_REGEX_LENGTH} characters`
  try {
    const size = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE).programSize()
    if (size > MAX_PROGRAM_SIZE) {
      return `is too complex: it compiles to ${size} instructions, at most ${MAX_PROGRAM_SIZE} are allowed (use smaller counted repetitions such as {n})`
    }
    return null
  } catch (err) {
    return `is not a valid RE2 regular expression: ${(err as Error).message.slice(0, 300)}`
  }
}

/** A stored rule ready to evaluate; null when it cannot compile any more (it then never matches). */
export function compileRule(r: SegmentRule): CompiledRule | null {
  const values = (Array.isArray(r.value) ? r.value : [r.value]).map((v) => v.toLowerCase())
  let regex: RE2JS | null = null
  if (r.operator === 'regex') {
    if (regexError(r.value as string)) return null
    regex = RE2JS.compile(r.value as string, RE2JS.CASE_INSENSITIVE)
  }
  return { type: r.type, operator: r.operator, key: r.key, values, regex, regexSize: regex ? regex.programSize() : 0 }
}

/** The positive form of the operator (eq, in, contains, starts_with, regex) on one present value. */
function positive(rule: CompiledRule, v: string, signals: Signals): boolean {
  switch (rule.operator) {
    case 'eq':
    case 'neq':
      return v === rule.values[0]
    case 'in':
    case 'not_in':
      return rule.values.includes(v)
    case 'contains':
      return v.includes(rule.values[0])
    case 'starts_with':
      return v.startsWith(rule.values[0])
    case 'regex':
      return signals.spendRegex(Math.max(1, v.length) * rule.regexSize) && rule.regex!.matcher(v).find()
  }
}

/**
 * One rule against the request. Comparisons are case-insensitive. An absent signal fails every operator except neq
 * and not_in; a country rule never matches unless the request came through a trusted proxy (spec: advisory only).
 * A multi-valued signal (languages) matches a positive operator when any value does, a negative one when none does.
 */
export function ruleMatches(rule: CompiledRule, signals: Signals): boolean {
  if (rule.type === 'country' && !signals.countryTrusted) return false
  const negative = NEGATIVE[rule.operator]
  if (rule.type === 'language') {
    const langs = signals.languages()
    let any = false
    for (let i = 0; i < langs.length && !any; i++) any = positive(rule, langs[i], signals)
    return negative ? !any : any
  }
  const v = signals.one(rule.type, rule.key)
  if (v === null) return negative
  return negative ? !positive(rule, v, signals) : positive(rule, v, signals)
}

// ---- Signals of a request ----

const lower = (v: string) => (v.length > MAX_SIGNAL_LENGTH ? v.slice(0, MAX_SIGNAL_LENGTH) : v).toLowerCase()

function primarySubtag(tag: string): string | null {
  const t = tag.trim()
  if (!t || t === '*') return null
  const i = t.indexOf('-')
  const p = (i === -1 ? t : t.slice(0, i)).toLowerCase()
  return /^[a-z]{1,8}$/.test(p) ? p : null
}

function safeDecode(v: string): string {
  if (v.indexOf('%') === -1) return v
  try {
    return decodeURIComponent(v)
  } catch {
    return v
  }
}

/** Signals read lazily from a Request: only what the evaluated rules ask for is parsed, and each part once. */
export class RequestSignals implements Signals {
  private query: URLSearchParams | null | undefined
  private referer: URL | null | undefined
  private cookies: Map<string, string> | undefined
  private langs: string[] | undefined
  private country: string | null | undefined
  private regexLeft = REGEX_BUDGET

  constructor(
    private request: Request,
    readonly countryTrusted: boolean,
    private countryHeader: string,
    /** `?lang` (already parsed by the caller), when given. */
    private lang: string | undefined,
  ) {}

  private queryParams(): URLSearchParams | null {
    if (this.query === undefined) {
      const url = this.request.url
      const q = url.indexOf('?')
      this.query = q === -1 ? null : new URLSearchParams(url.slice(q + 1))
    }
    return this.query
  }

  private refererUrl(): URL | null {
    if (this.referer === undefined) {
      const h = this.request.headers.get('referer')
      this.referer = null
      if (h && h.length <= 8192) {
        try {
          this.referer = new URL(h)
        } catch {}
      }
    }
    return this.referer
  }

  private cookie(name: string): string | null {
    if (!this.cookies) {
      this.cookies = new Map()
      const h = this.request.headers.get('cookie')
      if (h) {
        for (const part of h.split(';')) {
          const eq = part.indexOf('=')
          if (eq === -1) continue
          const k = part.slice(0, eq).trim()
          if (k && !this.cookies.has(k)) this.cookies.set(k, safeDecode(part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1')))
        }
      }
    }
    return this.cookies.get(name) ?? null
  }

  one(type: Exclude<RuleType, 'language'>, key: string | undefined): string | null {
    let v: string | null = null
    switch (type) {
      case 'country': {
        // Read once per request: every segment with a country rule asks again.
        if (this.country === undefined) this.country = this.request.headers.get(this.countryHeader)?.trim() || null
        v = this.country
        break
      }
      case 'referrer':
        v = this.refererUrl()?.hostname || null
        break
      case 'cookie':
        v = this.cookie(key!)
        break
      case 'query':
        v = this.queryParams()?.get(key!) ?? null
        break
      case 'utm_source':
      case 'utm_campaign':
        v = this.queryParams()?.get(type) ?? this.refererUrl()?.searchParams.get(type) ?? null
        break
    }
    return v === null ? null : lower(v)
  }

  spendRegex(units: number): boolean {
    if (units > this.regexLeft) return false
    this.regexLeft -= units
    return true
  }

  languages(): string[] {
    if (this.langs) return this.langs
    const out: string[] = []
    const add = (p: string | null) => {
      if (p && !out.includes(p)) out.push(p)
    }
    if (this.lang !== undefined) add(primarySubtag(this.lang))
    const header = this.request.headers.get('accept-language')
    if (header) {
      const parts = header.split(',')
      for (let i = 0; i < parts.length && i < 32; i++) {
        const [tag, ...params] = parts[i].split(';')
        let q = 1
        for (const p of params) {
          const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p)
          if (m) q = Number(m[1])
        }
        if (q > 0) add(primarySubtag(tag))
      }
    }
    this.langs = out
    return out
  }
}
