import { ScopedCache, cacheShare, plainSize } from '../../kernel/cache'
import { ScopedMemo } from '../../kernel/memo'
import { KernelErrors, validationFailed } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import { answerHeaders, cacheControls, conditionalAnswer, etagOf } from '../../kernel/public-answer'
import type { PublicSpace, PublicSpaceResolver } from '../../kernel/public-space'
import { readHeaderNames, readVary } from '../../kernel/read'
import { HTML_ACTIONS, type OverlayAction, type PublicOverlay } from './model'
import { attributeError, attributeTargetError, compilePattern, MAX_PATH, sanitize } from './rules'
import { activeOverlays } from './service'
import type { TestRule } from './tester'

/**
 * The public read of DOM overlay rules, built to stay as fast as the Story read: the Space (spaces' cache), the locale
 * chain (the Story read's memo), the audience segment (the segments module's resolution) and the Space's compiled
 * rules are all in memory; which rules match a path is remembered per (segment, path), and the answer for one set of
 * matching rules, locale chain and segment is rendered once — body, ETag and prebuilt headers — and shared by every
 * path with the same rules (so memory follows the rules, not the paths visitors send). A repeated read is a handful
 * of Map lookups and no JSON work, answered on the fast path.
 */

interface CompiledRule {
  id: string
  name: string
  match: (path: string) => boolean
  selector: string
  action: string
  attribute: string | null
  content: Record<string, string>
  segmentKey: string | null
  priority: number
}

/** One rendered answer, with its headers prebuilt for the public and the private (signal-resolved) case. */
export interface OverlayAnswer {
  view: PublicOverlay['data']
  body: Blob
  etag: string
  ok: Headers
  okPrivate: Headers
  notModified: Headers
  notModifiedPrivate: Headers
}

interface SpaceOverlays {
  spaceId: number
  rules: CompiledRule[]
  /** Matching rules (indexes into `rules`, joined) by segment and path. */
  matches: Map<string, string>
  /** Rendered answers by matching rules, locale chain and segment. */
  answers: Map<string, OverlayAnswer>
}

/** What one read serves. */
export interface ServedOverlay {
  answer: OverlayAnswer
  /** Resolved from the request's own signals in a Space with active segments: `Cache-Control: private`. */
  private: boolean
  spaceId: number
}

/** Estimated bytes of a rendered answer: its body, the view it was made from, four prebuilt Headers. */
const answerBytes = (key: string, a: OverlayAnswer) => a.body.size * 3 + key.length * 2 + 1024

/** Paths and answers remembered per Space; past either bound that map is dropped and filled anew. */
const MAX_MATCHES = 4096
const MAX_ANSWERS = 1024
/** Whole reads memoised by URL, Accept-Language and the read steps' declared headers (see `memoised`). */
const MAX_MEMO_KEY = 1024
/** A memoised read lives at most this long (a safety net: every event of its Space and a resync drop it anyway). */
const MEMO_TTL_MS = 60_000
const MAX_SPACES = 10_000
const encoder = new TextEncoder()

export type Resolve = (
  spaceId: number,
  request: Request,
  viaTrustedProxy: boolean,
  lang: string | undefined,
) => Resolution | Promise<Resolution>
/** A request's audience segment (the segments module's resolution): its key and the response headers that name it. */
export interface Resolution {
  segment: { key: string; headers: Record<string, string> } | null
  fromSignals: boolean
}
export type Chain = (space: PublicSpace, lang: string | undefined, acceptLanguage: string | null) => string[]

export interface OverlayReadRequest {
  spaceSlug: string
  /** `?path` as received (decoded once by the query parser). */
  path: string
  lang: string | undefined
  request: Request
  viaTrustedProxy: boolean
}


export class OverlayReader {
  readonly cache: ScopedCache<number, SpaceOverlays>
  /**
   * Whole reads by request (URL, Accept-Language, the headers the read steps declare), as the Story read memoises
   * them: a hit skips the query parsing and every lookup. Only reads that did not depend on other request signals enter it (a Space
   * without active segments, or a header naming one). It is the module's `memos`: the runtime drops a Space's entries
   * on every event of that Space and all of them on resync, so it never outlives a change of the Space, its locales,
   * segments or rules.
   */
  readonly memo: ScopedMemo<ServedOverlay>
  private readonly publicCC: string
  private readonly privateCC: string
  /** `Vary` and the memo's request headers, from the read steps' declarations (all registered by the first read). */
  private declared: { vary: string; headers: string[] } | undefined

  constructor(
    private kernel: Kernel,
    private spaces: PublicSpaceResolver,
    private chainOf: Chain,
    private resolve: Resolve,
  ) {
    const cc = cacheControls(kernel.config)
    this.publicCC = cc.public
    this.privateCC = cc.private
    this.memo = new ScopedMemo<ServedOverlay>({
      name: 'dom-overlays.memo',
      maxBytes: cacheShare(kernel.config, 1 / 64),
      // The answer is the overlay cache's too; counted here as well, so the memo alone cannot hold more than its share.
      sizeOf: (served, key) => answerBytes(key, served.answer) + 64,
    })
    this.cache = new ScopedCache({
      name: 'dom-overlays',
      scopeOf: (spaceId) => spaceId,
      idOf: String,
      load: (spaceId) => this.load(spaceId),
      now: () => kernel.clock.ms(),
      maxEntries: MAX_SPACES,
      maxBytes: cacheShare(kernel.config, 1 / 16),
      sizeOf: plainSize,
      invalidateOn: {
        'dom_overlay.created': (e) => e.spaceId,
        'dom_overlay.updated': (e) => e.spaceId,
        'dom_overlay.deleted': (e) => e.spaceId,
        'space.archived': (e) => e.spaceId,
      },
    })
  }

  private async load(spaceId: number): Promise<SpaceOverlays> {
    const rows = await activeOverlays(this.kernel, spaceId)
    const rules: CompiledRule[] = []
    for (const r of rows) {
      const p = compilePattern(r.pathPattern)
      if ('error' in p) continue // checked at save; a rule that no longer compiles matches nothing
      // Rules saved under an older policy follow the current one: a set_attribute the allow-list no longer takes is
      // not served (saving it again answers 422 naming why), and HTML is cleaned again (no `id`/`name`).
      if (r.action === 'set_attribute' && (!r.attribute || attributeError(r.attribute) || attributeTargetError(r.selector, r.attribute))) continue
      let content = r.content
      if (HTML_ACTIONS.includes(r.action as OverlayAction)) {
        content = {}
        for (const [lang, html] of Object.entries(r.content)) content[lang] = sanitize(html)
      }
      rules.push({ id: r.uuid, name: r.name, match: p.match, selector: r.selector, action: r.action, attribute: r.attribute, content, segmentKey: r.segmentKey, priority: r.priority })
    }
    return { spaceId, rules, matches: new Map(), answers: new Map() }
  }

  /** The read steps' declared request headers and the `Vary` made of them (with Accept-Language). */
  private get steps() {
    return (this.declared ??= { vary: readVary(this.kernel.readSteps), headers: readHeaderNames(this.kernel.readSteps) })
  }

  /** The memo's key of a request; null when it is not memoisable (too long). */
  memoKey(url: string, request: Request): string | null {
    const h = request.headers
    const al = h.get('accept-language')
    const names = this.steps.headers
    let rest = ''
    let any = al !== null
    for (let i = 0; i < names.length; i++) {
      const v = h.get(names[i])
      if (v !== null) any = true
      rest += `\u0000${v ?? ''}`
    }
    // The common read carries none: the URL alone (no URL holds a NUL), no string built.
    if (!any) return url.length > MAX_MEMO_KEY ? null : url
    const key = `${url}\u0000${al ?? ''}${rest}`
    return key.length > MAX_MEMO_KEY ? null : key
  }

  /** A memoised read of this request, or undefined. */
  memoised(key: string, now: number): ServedOverlay | undefined {
    return this.memo.get(key, now)
  }

  /** Remembers a synchronous read that no per-visitor signal decided. */
  remember(key: string, served: ServedOverlay, now: number) {
    if (served.private) return
    this.memo.set(served.spaceId, key, served, now + MEMO_TTL_MS)
  }

  /** The read; throws AppError 404/422. Synchronous when the Space, its rules and its segments are cached. */
  read(req: OverlayReadRequest): ServedOverlay | Promise<ServedOverlay> {
    if (req.path.length > MAX_PATH || req.path[0] !== '/') throw validationFailed({ path: ['must be a page path starting with /'] })
    const space = this.spaces.get(req.spaceSlug)
    if (space instanceof Promise) return space.then((s) => this.readIn(req, s))
    return this.readIn(req, space)
  }

  private readIn(req: OverlayReadRequest, space: PublicSpace | null): ServedOverlay | Promise<ServedOverlay> {
    if (!space) throw KernelErrors.notFound('Space not found.')
    const chain = this.chainOf(space, req.lang, req.request.headers.get('accept-language'))
    const set = this.cache.get(space.id)
    const resolution = this.resolve(space.id, req.request, req.viaTrustedProxy, req.lang)
    if (set instanceof Promise || resolution instanceof Promise) {
      return Promise.all([set, resolution]).then(([s, r]) => this.serve(req, chain, s, r))
    }
    return this.serve(req, chain, set, resolution)
  }

  private serve(req: OverlayReadRequest, chain: string[], set: SpaceOverlays, resolution: Resolution): ServedOverlay {
    const segment = resolution.segment?.key ?? null
    const seg = segment ?? ''
    const pathKey = `${seg}\u0000${req.path}`
    let matched = set.matches.get(pathKey)
    if (matched === undefined) {
      matched = matching(set.rules, decodedPath(req.path), segment)
      let delta = pathKey.length * 2 + matched.length * 2 + 48
      if (set.matches.size >= MAX_MATCHES) {
        for (const [k, v] of set.matches) delta -= k.length * 2 + v.length * 2 + 48
        set.matches.clear()
      }
      set.matches.set(pathKey, matched)
      this.cache.resize(String(set.spaceId), set, delta)
    }
    const key = `${matched}\u0000${chain.join(',')}\u0000${seg}`
    let answer = set.answers.get(key)
    if (answer === undefined) {
      answer = this.render(matched, chain, set, segment, resolution.segment?.headers ?? null)
      let delta = answerBytes(key, answer)
      if (set.answers.size >= MAX_ANSWERS) {
        for (const [k, v] of set.answers) delta -= answerBytes(k, v)
        set.answers.clear()
      }
      set.answers.set(key, answer)
      this.cache.resize(String(set.spaceId), set, delta)
    }
    return { answer, private: resolution.fromSignals, spaceId: set.spaceId }
  }

  /**
   * The rules a page gets, chosen exactly as the public read chooses them (the same compiled rules, path match, segment
   * and locale chain), for the admin's tester: `segment` is the audience segment to test as (null: a visitor in none).
   */
  async testRules(spaceSlug: string, path: string, lang: string | undefined, segment: string | null): Promise<{ lang: string; rules: TestRule[] }> {
    const space = await this.spaces.get(spaceSlug)
    if (!space) throw KernelErrors.notFound('Space not found.')
    const chain = this.chainOf(space, lang, null)
    const set = await this.cache.get(space.id)
    const matched = matching(set.rules, decodedPath(path), segment)
    const rules: TestRule[] = []
    for (const i of matched === '' ? [] : matched.split(',')) {
      const r = set.rules[Number(i)]
      let content: string | null = null
      if (r.action !== 'hide') {
        content = chain.map((c) => r.content[c]).find((v) => v !== undefined) ?? null
        if (content === null) continue
      }
      rules.push({ id: r.id, name: r.name, selector: r.selector, action: r.action, attribute: r.attribute, content })
    }
    return { lang: chain[0] ?? space.defaultLang, rules }
  }

  private render(matched: string, chain: string[], set: SpaceOverlays, segment: string | null, headers: Record<string, string> | null): OverlayAnswer {
    const rules: PublicOverlay['data']['rules'] = []
    for (const i of matched === '' ? [] : matched.split(',')) {
      const r = set.rules[Number(i)]
      let content: string | null = null
      if (r.action !== 'hide') {
        for (const c of chain) {
          const v = r.content[c]
          if (v !== undefined) {
            content = v
            break
          }
        }
        if (content === null) continue // nothing to show in this locale chain
      }
      rules.push({ id: r.id, selector: r.selector, action: r.action, attribute: r.attribute, content, priority: r.priority })
    }
    const view = { lang: chain[0], segment, rules }
    const bytes = encoder.encode(JSON.stringify({ data: view }))
    const etag = etagOf(bytes)
    const vary = this.steps.vary
    const pub = answerHeaders(etag, { cacheControl: this.publicCC, vary, headers })
    const priv = answerHeaders(etag, { cacheControl: this.privateCC, vary, headers })
    return {
      view,
      body: new Blob([bytes]),
      etag,
      ok: new Headers(pub.ok),
      okPrivate: new Headers(priv.ok),
      notModified: new Headers(pub.notModified),
      notModifiedPrivate: new Headers(priv.notModified),
    }
  }
}

/** The rules (indexes, joined) an active page path gets in a segment: its pattern matches, its segment is none or this. */
function matching(rules: CompiledRule[], page: string, segment: string | null): string {
  let out = ''
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]
    if (r.segmentKey !== null && r.segmentKey !== segment) continue
    if (r.match(page)) out += out === '' ? String(i) : `,${i}`
  }
  return out
}

/** The page path as a visitor reads it: percent-escapes decoded once (a malformed escape is matched as is). */
function decodedPath(path: string): string {
  if (path.indexOf('%') === -1) return path
  try {
    return decodeURIComponent(path)
  } catch {
    return path
  }
}

/** A served read as a Response (200 or 304 on If-None-Match). */
export function overlayResponse(request: Request, served: ServedOverlay): Response {
  const a = served.answer
  return served.private ? conditionalAnswer(request, a.etag, a.body, a.okPrivate, a.notModifiedPrivate) : conditionalAnswer(request, a.etag, a.body, a.ok, a.notModified)
}
