import type { Config } from '../config'

/**
 * The public answer: what every cacheable read of the public surface (Stories, lists, the overlay, galleries, assets,
 * products, events, GraphQL GET, the admin bundle) answers with, so no module builds its own.
 *
 * - `etagOf(body)`: the strong ETag of the exact bytes sent (SHA-256, base64url, 160 bits, quoted).
 * - `notModified(request, etag, headers)`: the conditional GET (the 304, or null) — `If-None-Match` compared weakly (RFC
 *   9110 for GET), `*` matches, a header longer than 4,096 characters or garbage never matches (so a hostile header
 *   costs no split of megabytes).
 * - `cacheControls(config)`: the `Cache-Control` of a shared public answer (`public, max-age=CDN_MAX_AGE,
 *   stale-while-revalidate=CDN_STALE_WHILE_REVALIDATE`), of a per-visitor one (`private, max-age=CDN_MAX_AGE`) and of a
 *   draft (`private, no-store`).
 * - `answerHeaders(etag, ...)`: the headers of a 200 and of its 304 (ETag, Cache-Control, Vary on both; Content-Type,
 *   nosniff and Content-Language on the 200 only).
 * - `conditionalAnswer(...)`: 304 or 200 from those; `jsonAnswer(request, value, ...)`: a JSON value as a public answer,
 *   `application/json; charset=utf-8`.
 *
 * `Vary` of a read that runs the read steps is `readVary(kernel.readSteps)` (kernel/read.ts): Accept-Language and the
 * request headers the steps declare.
 */

/** Longest `If-None-Match` header compared; a longer one never matches (the body is sent). */
export const MAX_IF_NONE_MATCH = 4096
/** The Content-Type of every JSON answer. */
export const JSON_TYPE = 'application/json; charset=utf-8'

/** The strong ETag of a body's bytes (a string is hashed as UTF-8). */
export function etagOf(body: string | Uint8Array): string {
  return `"${new Bun.CryptoHasher('sha256').update(body).digest('base64url').slice(0, 27)}"`
}

/** `If-None-Match` against a strong ETag (weak comparison, as RFC 9110 prescribes for GET); garbage never matches. */
export function etagMatches(header: string | null, etag: string): boolean {
  if (!header || header.length > MAX_IF_NONE_MATCH) return false
  if (header.trim() === '*') return true
  for (const part of header.split(',')) {
    const t = part.trim()
    if (t === etag || (t.startsWith('W/') && t.slice(2) === etag)) return true
  }
  return false
}

/**
 * The conditional GET: 304 with `headers` when the request's `If-None-Match` matches `etag`, else null (answer the
 * body). Every public answer's 304 comes from here.
 */
export function notModified(request: Request, etag: string, headers: HeadersInit): Response | null {
  if (!etagMatches(request.headers.get('if-none-match'), etag)) return null
  return new Response(null, { status: 304, headers })
}

/** The `Cache-Control` values of public answers, from the configuration. */
export interface CacheControls {
  /** A shared cache may keep it: `public, max-age=CDN_MAX_AGE, stale-while-revalidate=CDN_STALE_WHILE_REVALIDATE`. */
  readonly public: string
  /** Decided from one visitor's own signals: `private, max-age=CDN_MAX_AGE`. */
  readonly private: string
  /** Drafts (`version=draft`): `private, no-store`. */
  readonly draft: string
}

const controls = new WeakMap<object, CacheControls>()

/** The Cache-Control values for `config` (built once per configuration). */
export function cacheControls(config: Pick<Config, 'cdnMaxAge' | 'cdnStaleWhileRevalidate'>): CacheControls {
  let c = controls.get(config)
  if (!c) {
    c = Object.freeze({
      public: `public, max-age=${config.cdnMaxAge}, stale-while-revalidate=${config.cdnStaleWhileRevalidate}`,
      private: `private, max-age=${config.cdnMaxAge}`,
      draft: 'private, no-store',
    })
    controls.set(config, c)
  }
  return c
}

export interface AnswerOptions {
  cacheControl: string
  /** `Vary`, when the answer depends on request headers. */
  vary?: string | null
  /** Content-Type of the 200; JSON when absent. */
  contentType?: string
  /** Content-Language of the 200. */
  contentLanguage?: string | null
  /** Further headers of both the 200 and the 304. */
  headers?: Record<string, string> | null
}

/** The headers of a public answer's 200 (`ok`) and 304 (`notModified`). */
export interface AnswerHeaders {
  ok: Record<string, string>
  notModified: Record<string, string>
}

export function answerHeaders(etag: string, o: AnswerOptions): AnswerHeaders {
  const notModified: Record<string, string> = { ETag: etag, 'Cache-Control': o.cacheControl }
  if (o.vary) notModified.Vary = o.vary
  if (o.headers) Object.assign(notModified, o.headers)
  // nosniff on the 200 itself: answers served on the fast path do not pass the request front that adds it.
  const ok: Record<string, string> = { 'Content-Type': o.contentType ?? JSON_TYPE, 'X-Content-Type-Options': 'nosniff', ...notModified }
  if (o.contentLanguage) ok['Content-Language'] = o.contentLanguage
  return { ok, notModified }
}

/** 304 with `notModifiedHeaders` when the request's If-None-Match matches `etag`, else 200 with `body`. */
export function conditionalAnswer(request: Request, etag: string, body: BodyInit, headers: HeadersInit, notModifiedHeaders: HeadersInit): Response {
  return notModified(request, etag, notModifiedHeaders) ?? new Response(body, { headers })
}

/** A body with its ETag and headers as a public answer (200 or 304). */
export function bodyAnswer(request: Request, body: string | Uint8Array<ArrayBuffer>, o: AnswerOptions): Response {
  const etag = etagOf(body)
  const h = answerHeaders(etag, o)
  return conditionalAnswer(request, etag, body, h.ok, h.notModified)
}

/** A JSON value as a public answer: `application/json; charset=utf-8`, strong ETag, 304 on a match. */
export function jsonAnswer(request: Request, value: unknown, o: Omit<AnswerOptions, 'contentType'>): Response {
  return bodyAnswer(request, JSON.stringify(value), o)
}
