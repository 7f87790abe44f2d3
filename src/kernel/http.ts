import { maxHeaderSize } from 'node:http'
import { BlockList, isIP } from 'node:net'

/**
 * Bun's HTTP parser answers a request whose request line and header fields exceed this many bytes itself, with a
 * bare `431` and no body, before any of our code runs: Bun has no hook for it. It is `--max-http-header-size`
 * (Bun's default 16 KiB; the executable is built with PARSER_HEADER_BYTES, scripts/build.ts).
 */
export const PARSER_HEADER_LIMIT = maxHeaderSize
/** The parser limit the executable is built with (and `bun run start` passes): 128 KiB. */
export const PARSER_HEADER_BYTES = 131_072
/**
 * The longest request target (path and query) we take: half the parser limit we build with, so that an over-long
 * URL meets our 414 in the shared error shape well before the parser's bare 431, and the other half is left to the
 * header fields. Fixed, whatever the running parser's limit: under a plain `bun` (16 KiB) longer URLs meet the
 * parser first, which `serve` warns about at start.
 */
export const MAX_URL_BYTES = PARSER_HEADER_BYTES / 2

const MiB = 1024 * 1024
/** A byte count as the docs state limits: `100 MiB (104,857,600 bytes)`, `64 KiB (65,536 bytes)`, `500 bytes`. */
export function bytesText(n: number): string {
  const exact = `${n.toLocaleString('en-US')} bytes`
  if (n >= MiB && n % MiB === 0) return `${n / MiB} MiB (${exact})`
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB (${exact})`
  return exact
}

/**
 * The one capped reader of a request body: its bytes, or null when it is longer than `limit`. A declared
 * Content-Length over the limit is null before anything is read; a chunked body without one is read until it passes
 * the limit, then the stream is cancelled, so no more than `limit` bytes (plus one chunk) are ever held. A stream that
 * fails rejects. The JSON body parser (413 on null), the analytics beacon and the link pages' form read through it.
 */
export async function readBodyCapped(request: Request, limit: number): Promise<Uint8Array | null> {
  const length = request.headers.get('content-length')
  if (length !== null && Number(length) > limit) return null
  if (!request.body) return new Uint8Array(0)
  // Bun hands a body with a length over in one piece; the stream path covers chunked uploads without one.
  if (length !== null) {
    const buf = new Uint8Array(await request.arrayBuffer())
    return buf.byteLength > limit ? null : buf
  }
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      return null
    }
    chunks.push(value)
  }
  return chunks.length === 1 ? chunks[0] : new Uint8Array(Buffer.concat(chunks))
}

/** A dotted-quad IPv4 address in canonical form (0–255, no leading zeros): a character loop, no regex. */
export function isIPv4(s: string): boolean {
  const n = s.length
  if (n < 7 || n > 15) return false
  let parts = 0
  let value = 0
  let digits = 0
  for (let i = 0; i <= n; i++) {
    const c = i === n ? 46 : s.charCodeAt(i) // a virtual '.' closes the last part
    if (c === 46) {
      if (digits === 0 || value > 255 || ++parts > 4) return false
      value = 0
      digits = 0
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && value === 0) return false // a leading zero
      value = value * 10 + (c - 48)
      if (++digits > 3) return false
    } else {
      return false
    }
  }
  return parts === 4
}

/** isIP without the node:net call for the common IPv4 case. */
const ipVersion = (s: string) => (isIPv4(s) ? 4 : s.includes(':') ? isIP(s) : 0)
const TRUST_MEMO_LIMIT = 4096

/**
 * The client address for rate limits and logs: the socket peer, or — only when the peer is a trusted proxy — the
 * right-most address in X-Forwarded-For that is not itself a trusted proxy.
 */
export class ClientIpResolver {
  private trusted = new BlockList()
  private none: boolean
  /** Peer → trusted?, remembered: a server sees few distinct peers (its proxies), and the check is not free. */
  private memo = new Map<string, boolean>()

  constructor(trustedProxies: string[]) {
    // Entries are checked by the configuration (src/config.ts): addresses or ranges, never a wildcard.
    for (const entry of trustedProxies) {
      const [addr, bits] = entry.split('/')
      const family = isIP(addr) === 6 ? 'ipv6' : 'ipv4'
      if (!isIP(addr)) throw new Error(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`)
      if (bits === undefined) this.trusted.addAddress(addr, family)
      else this.trusted.addSubnet(addr, Number(bits), family)
    }
    this.none = trustedProxies.length === 0
  }

  isTrusted(ip: string): boolean {
    if (this.none) return false
    let t = this.memo.get(ip)
    if (t === undefined) {
      const plain = ip.startsWith('::ffff:') ? ip.slice(7) : ip
      const v = ipVersion(plain)
      t = v !== 0 && this.trusted.check(plain, v === 6 ? 'ipv6' : 'ipv4')
      if (this.memo.size >= TRUST_MEMO_LIMIT) this.memo.clear()
      this.memo.set(ip, t)
    }
    return t
  }

  resolve(peer: string, forwardedFor: string | null): string {
    if (!forwardedFor || !this.isTrusted(peer)) return peer
    // One hop (the usual case behind one proxy): no split, no array.
    if (forwardedFor.indexOf(',') === -1) {
      const hop = forwardedFor.trim()
      return ipVersion(hop) ? hop : peer
    }
    const hops = forwardedFor
      .split(',')
      .map((s) => s.trim())
      .filter((s) => ipVersion(s))
    for (let i = hops.length - 1; i >= 0; i--) if (!this.isTrusted(hops[i])) return hops[i]
    return hops[0] ?? peer
  }
}

/** The path of an absolute request URL, without `new URL()` (the hot path calls this on every request). */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return '/'
  const q = url.indexOf('?', start)
  const h = url.indexOf('#', start)
  const end = q === -1 ? (h === -1 ? url.length : h) : h === -1 ? q : Math.min(q, h)
  return url.slice(start, end)
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

// Request ids are UUID-shaped: a random per-process prefix (the first 24 hex digits of a v4 UUID) and a counter in
// the last group — unique across instances, and cheaper than a fresh randomUUID per request. The counter runs in
// [2^44, 2^48), where every value has exactly 12 hex digits (no padding), from a random start.
const ID_PREFIX = crypto.randomUUID().slice(0, 24)
const ID_MIN = 2 ** 44
const ID_MAX = 2 ** 48
let idCounter = ID_MIN + Math.floor(Math.random() * (ID_MAX - ID_MIN))

export function newRequestId(): string {
  if (++idCounter >= ID_MAX) idCounter = ID_MIN
  return ID_PREFIX + idCounter.toString(16)
}

/** Keeps a caller's X-Request-Id when it is harmless, otherwise makes a new one. */
export function requestIdFrom(header: string | null): string {
  return header && SAFE_REQUEST_ID.test(header) ? header : newRequestId()
}

export interface Page {
  page: number
  perPage: number
  offset: number
}

export function pageOf(page: number | undefined, perPage: number | undefined, defaults = { perPage: 25, max: 100 }): Page {
  const p = page ?? 1
  const pp = Math.min(perPage ?? defaults.perPage, defaults.max)
  return { page: p, perPage: pp, offset: (p - 1) * pp }
}

const NOT_CANONICAL_ORIGIN = /[A-Z]|:80$|:443$/

/**
 * `scheme://host[:port]` of the URLs the service hands out (asset URLs, mail links, embed snippets, `meta` URLs of a
 * Story read): PUBLIC_URL when set; else the origin the request came to, as `URL.origin` spells it (lower case, no
 * default port); else — no request, e.g. a job — `http://localhost:PORT`. The one rule for every module; a request
 * whose origin is already canonical (the usual case) costs one slice and no URL object.
 */
export function publicOrigin(config: { publicUrl: string | null; port: number }, requestUrl: string | null | undefined): string {
  if (config.publicUrl) return config.publicUrl
  if (!requestUrl) return `http://localhost:${config.port}`
  const start = requestUrl.indexOf('//') + 2
  const end = requestUrl.indexOf('/', start)
  const origin = end === -1 ? requestUrl : requestUrl.slice(0, end)
  return NOT_CANONICAL_ORIGIN.test(origin) ? new URL(requestUrl).origin : origin
}
