import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import { validationFailed } from './errors'

/**
 * The one way the service calls a URL a user gave it (webhooks, datasource pulls, form webhooks). It resolves the
 * host, refuses addresses inside the machine or its networks, then connects to exactly the address it checked (the
 * URL carries the IP; Host and TLS server name carry the original name), so DNS cannot be rebound between check and
 * connect. Redirects are never followed, response bodies are read to a cap, and every call has a deadline.
 */

export type OutboundErrorKind = 'invalid_url' | 'blocked_address' | 'dns_failed' | 'timeout' | 'connection_failed'

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundErrorKind,
    message: string,
  ) {
    super(message)
  }
}

export interface OutboundPolicy {
  /**
   * Allow loopback, private and other internal addresses (SERVICE_OUTBOUND_ALLOW_PRIVATE, operator-configured URLs).
   * Cloud metadata addresses stay refused whatever this says.
   */
  allowPrivate: boolean
}

// Every range a request from the service must not reach unless allowed: "this network", private, shared (CGNAT),
// loopback, link-local, IETF/documentation/benchmark ranges, multicast, reserved and broadcast; IPv6 alike, with every
// IPv6 form that carries an IPv4 address a gateway may translate to (mapped, translated, compatible, NAT64, 6to4,
// Teredo). IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are checked against the IPv4 rules by BlockList itself.
const INTERNAL = new BlockList()
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  INTERNAL.addSubnet(net, bits, 'ipv4')
}
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::', 96], // IPv4-compatible (deprecated)
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT): a translator maps it to any IPv4 address, internal ones included
  ['64:ff9b::', 96], // NAT64: may translate to an internal IPv4 address
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments, Teredo (2001::/32, an IPv4 address inside) included
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['3fff::', 20], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  INTERNAL.addSubnet(net, bits, 'ipv6')
}

// Cloud metadata services: they hand out the machine's credentials to whoever asks from inside. Never reachable,
// SERVICE_OUTBOUND_ALLOW_PRIVATE and operator-configured URLs (AI_BASE_URL, the captcha verifiers) included: all of
// IPv4 link-local (169.254.169.254 of AWS, GCP, Azure, OpenStack and others; 169.254.170.2 of ECS), Alibaba's
// 100.100.100.200, Azure's host endpoint 168.63.129.16, AWS's fd00:ec2::/32 and GCP's fd20:ce::254.
const METADATA = new BlockList()
METADATA.addSubnet('169.254.0.0', 16, 'ipv4')
METADATA.addAddress('100.100.100.200', 'ipv4')
METADATA.addAddress('168.63.129.16', 'ipv4')
METADATA.addSubnet('fd00:ec2::', 32, 'ipv6')
METADATA.addAddress('fd20:ce::254', 'ipv6')

/** The 8 groups of an IPv6 address (a trailing dotted quad included), or null. */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase()
  const zone = text.indexOf('%')
  if (zone !== -1) text = text.slice(0, zone)
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (quad) {
    const b = quad.slice(1).map(Number)
    text = `${text.slice(0, quad.index)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return null
  const part = (s: string) => (s ? s.split(':').map((h) => parseInt(h, 16)) : [])
  const head = part(halves[0]!)
  const tail = halves.length === 2 ? part(halves[1]!) : []
  const fill = 8 - head.length - tail.length
  if (halves.length === 1 ? fill !== 0 : fill < 0) return null
  const groups = [...head, ...new Array(halves.length === 2 ? fill : 0).fill(0), ...tail]
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null
}

const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`

/**
 * The IPv4 addresses an IPv6 address carries, as a translator or tunnel would reach them: mapped (::ffff:a.b.c.d),
 * translated (::ffff:0:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002:AABB:CCDD::)
 * and Teredo (2001:0:…, the client address inverted in the last 32 bits).
 */
export function embeddedIPv4(address: string): string[] {
  const g = ipv6Groups(address)
  if (!g) return []
  const out: string[] = []
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  if (zero(0, 5) && g[5] === 0xffff) out.push(v4(g[6]!, g[7]!))
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) out.push(v4(g[6]!, g[7]!))
  if (zero(0, 6)) out.push(v4(g[6]!, g[7]!))
  if (g[0] === 0x64 && g[1] === 0xff9b && (zero(2, 6) || g[2] === 1)) out.push(v4(g[6]!, g[7]!))
  if (g[0] === 0x2002) out.push(v4(g[1]!, g[2]!))
  if (g[0] === 0x2001 && g[1] === 0) out.push(v4(g[6]! ^ 0xffff, g[7]! ^ 0xffff))
  return out
}

/** True for a cloud metadata address, in any IPv6 form that carries one: never called, whatever the policy. */
export function isMetadataAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return METADATA.check(address, 'ipv4')
  if (family !== 6) return true
  if (METADATA.check(address, 'ipv6')) return true
  return embeddedIPv4(address).some((a) => METADATA.check(a, 'ipv4'))
}

/** True for an address the service must not call unless private targets are allowed. */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return INTERNAL.check(address, 'ipv4')
  if (family === 6) return INTERNAL.check(address, 'ipv6') || isMetadataAddress(address)
  return true // not an address at all: refuse
}

/** Parses and checks the form of a user-supplied URL: absolute, http or https, a host; no fetch, no DNS. */
export function parseOutboundUrl(raw: string): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new OutboundError('invalid_url', 'must be an absolute URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundError('invalid_url', 'must be an http or https URL')
  }
  if (!url.hostname) throw new OutboundError('invalid_url', 'must name a host')
  return url
}

export interface ResolvedTarget {
  url: URL
  /** Every address of the host, all checked, in resolver order: the request connects to one of these only. */
  addresses: { address: string; family: 4 | 6 }[]
}

function hostOf(url: URL): string {
  // WHATWG keeps IPv6 literals in brackets.
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
}

/**
 * Resolves the URL's host (every address it has) and refuses it when any address is internal, unless the policy
 * allows private targets.
 */
export async function resolveTarget(raw: string | URL, policy: OutboundPolicy, signal?: AbortSignal): Promise<ResolvedTarget> {
  const url = typeof raw === 'string' ? parseOutboundUrl(raw) : raw
  const host = hostOf(url)
  let addresses: { address: string; family: number }[]
  const literal = isIP(host)
  if (literal) {
    addresses = [{ address: host, family: literal }]
  } else {
    try {
      const pending = lookup(host, { all: true, verbatim: true })
      addresses = signal ? await raceAbort(pending, signal) : await pending
    } catch (err) {
      if (signal?.aborted) throw new OutboundError('timeout', `resolving ${host} timed out`)
      throw new OutboundError('dns_failed', `the host ${host} does not resolve (${(err as { code?: string }).code ?? 'error'})`)
    }
    if (!addresses.length) throw new OutboundError('dns_failed', `the host ${host} does not resolve`)
  }
  const metadata = addresses.find((a) => isMetadataAddress(a.address))
  if (metadata) {
    throw new OutboundError(
      'blocked_address',
      `the host ${host} resolves to ${metadata.address}, a cloud metadata address: it is never called (SERVICE_OUTBOUND_ALLOW_PRIVATE does not open it)`,
    )
  }
  if (!policy.allowPrivate) {
    const internal = addresses.find((a) => isInternalAddress(a.address))
    if (internal) {
      throw new OutboundError(
        'blocked_address',
        `the host ${host} resolves to ${internal.address}, a loopback, private, link-local or otherwise internal address ` +
          '(the operator can allow such targets with SERVICE_OUTBOUND_ALLOW_PRIVATE=true)',
      )
    }
  }
  return { url, addresses: addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })) }
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort)
        resolve(v)
      },
      (e) => {
        signal.removeEventListener('abort', onAbort)
        reject(e)
      },
    )
  })
}

export interface OutboundRequest {
  method?: string
  headers?: Record<string, string>
  body?: string | Uint8Array
  /** Deadline for the whole call: DNS, connect, response and the capped body read. Default 10 s. */
  timeoutMs?: number
  /** Bytes of the response body kept; the rest is not read. Default 4096. */
  maxResponseBytes?: number
}

export interface OutboundResponse {
  status: number
  headers: Headers
  /** The first `maxResponseBytes` of the body, decoded as UTF-8. */
  body: string
  truncated: boolean
  /** From sending the request to the end of the (capped) body read. */
  latencyMs: number
  address: string
}

/**
 * Sends one request to a user-supplied URL under the outbound policy. Throws OutboundError for a refused or
 * unresolvable target, a timeout or a connection failure; any HTTP status (including 3xx, never followed) is a
 * response.
 */
export async function outboundFetch(raw: string, req: OutboundRequest, policy: OutboundPolicy): Promise<OutboundResponse> {
  const timeoutMs = req.timeoutMs ?? 10_000
  const cap = req.maxResponseBytes ?? 4096
  const signal = AbortSignal.timeout(timeoutMs)
  const started = performance.now()
  const target = await resolveTarget(raw, policy, signal)
  const host = hostOf(target.url)
  const headers: Record<string, string> = { 'User-Agent': 'content-service-webhooks', ...req.headers, Host: target.url.host }
  let res: Response | null = null
  let address = ''
  let lastError: unknown = null
  // Connect to the checked addresses only, one after the other while connections are refused (a host may publish
  // an IPv6 and an IPv4 address and listen on one of them).
  for (const candidate of target.addresses) {
    const pinned = new URL(target.url.href)
    pinned.hostname = candidate.family === 6 ? `[${candidate.address}]` : candidate.address
    try {
      res = await fetch(pinned, {
        method: req.method ?? 'POST',
        headers,
        body: req.body,
        redirect: 'manual',
        signal,
        proxy: false,
        ...(target.url.protocol === 'https:' && !isIP(host) ? { tls: { serverName: host } } : {}),
      } as RequestInit)
      address = candidate.address
      break
    } catch (err) {
      if (signal.aborted) throw new OutboundError('timeout', `no response within ${timeoutMs / 1000} s`)
      lastError = err
    }
  }
  if (!res) throw new OutboundError('connection_failed', connectionMessage(lastError))
  let body: Uint8Array
  let truncated = false
  try {
    ;({ body, truncated } = await readCapped(res, cap))
  } catch (err) {
    if (signal.aborted) throw new OutboundError('timeout', `the response body did not arrive within ${timeoutMs / 1000} s`)
    throw new OutboundError('connection_failed', connectionMessage(err))
  }
  return {
    status: res.status,
    headers: res.headers,
    // stream: an incomplete UTF-8 sequence cut at the cap is dropped rather than turned into U+FFFD
    body: new TextDecoder().decode(body, { stream: true }),
    truncated,
    latencyMs: Math.max(0, Math.round(performance.now() - started)),
    address,
  }
}

function connectionMessage(err: unknown): string {
  const e = err as { code?: string; message?: string }
  return e?.code ? `${e.code}: ${e.message ?? 'connection failed'}` : (e?.message ?? 'connection failed')
}

async function readCapped(res: Response, cap: number): Promise<{ body: Uint8Array; truncated: boolean }> {
  if (!res.body) return { body: new Uint8Array(0), truncated: false }
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  let truncated = false
  while (size < cap) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.length
  }
  if (size >= cap) {
    // Stop reading: whatever else the receiver sends is not ours to hold. (A body of exactly `cap` bytes whose end
    // had not arrived yet reads as complete.)
    truncated = size > cap
    await reader.cancel().catch(() => {})
  }
  const out = new Uint8Array(Math.min(size, cap))
  let off = 0
  for (const c of chunks) {
    const take = Math.min(c.length, out.length - off)
    out.set(c.subarray(0, take), off)
    off += take
    if (off >= out.length) break
  }
  return { body: out, truncated }
}

/**
 * Checks a receiver URL a user registers (webhooks, plugins): http(s), resolving only to addresses the policy allows.
 * Returns it trimmed; otherwise 422 with the reason at `field`.
 */
export async function checkReceiverUrl(raw: string, policy: OutboundPolicy, field = 'url'): Promise<string> {
  try {
    await resolveTarget(parseOutboundUrl(raw.trim()), policy, AbortSignal.timeout(5_000))
    return raw.trim()
  } catch (err) {
    if (err instanceof OutboundError) throw validationFailed({ [field]: [err.message] })
    throw err
  }
}
