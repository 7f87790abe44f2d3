import { BlockList, isIP } from 'node:net'

/**
 * The client address for rate limits and logs: the socket peer, or — only when the peer is a trusted proxy — the
 * right-most address in X-Forwarded-For that is not itself a trusted proxy.
 */
export class ClientIpResolver {
  private trusted = new BlockList()
  private any = false

  constructor(trustedProxies: string[]) {
    for (const entry of trustedProxies) {
      if (entry === '*') {
        this.any = true
        continue
      }
      const [addr, bits] = entry.split('/')
      const family = isIP(addr) === 6 ? 'ipv6' : 'ipv4'
      if (!isIP(addr)) throw new Error(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`)
      if (bits === undefined) this.trusted.addAddress(addr, family)
      else this.trusted.addSubnet(addr, Number(bits), family)
    }
  }

  isTrusted(ip: string): boolean {
    if (this.any) return true
    const plain = ip.startsWith('::ffff:') ? ip.slice(7) : ip
    const v = isIP(plain)
    return v !== 0 && this.trusted.check(plain, v === 6 ? 'ipv6' : 'ipv4')
  }

  resolve(peer: string, forwardedFor: string | null): string {
    if (!forwardedFor || !this.isTrusted(peer)) return peer
    const hops = forwardedFor
      .split(',')
      .map((s) => s.trim())
      .filter((s) => isIP(s))
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

/** Keeps a caller's X-Request-Id when it is harmless, otherwise makes a new one. */
export function requestIdFrom(header: string | null): string {
  return header && SAFE_REQUEST_ID.test(header) ? header : crypto.randomUUID()
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
