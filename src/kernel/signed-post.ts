import { signDelivery } from './crypto'
import type { Kernel } from './kernel'
import { OutboundError, outboundFetch } from './outbound'

/**
 * The one signed, size-capped outbound POST (webhook deliveries, form webhook actions, plugin calls): the body signed as
 * `X-Service-Signature: sha256=HMAC(secret, "<timestamp>.<body>")`, at most RESPONSE_BODY_LIMIT bytes of the answer
 * read, and one classification of the outcome that every caller's retry schedule follows:
 * - 2xx: delivered;
 * - 5xx, a timeout, a refused connection, a failed DNS lookup: retry (the receiver or the network may recover);
 * - anything else (4xx, 3xx — redirects are not followed —, a blocked address, an invalid URL): failed for good.
 */

/** The retry schedule of signed deliveries (spec 6): 30 s, 5 min, 30 min, 2 h, 12 h. */
export const RETRY_DELAYS_MS = [30_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 12 * 3_600_000]
/** At most this much of a receiver's answer is read and kept. */
export const RESPONSE_BODY_LIMIT = 4096

export interface SignedPost {
  url: string
  /** The exact bytes sent and signed. */
  body: string
  secret: string
  /** The signature's timestamp (the attempt's start). */
  at: Date
  /** `X-Service-Event`. */
  event: string
  /** `X-Service-Delivery`: the receiver's idempotency key. */
  deliveryId: string
  /** The whole call's deadline (default WEBHOOK_TIMEOUT_MS; plugins: their own `timeout_ms`). */
  timeoutMs?: number
  /** Bytes of the answer read (default RESPONSE_BODY_LIMIT; plugins read amended documents). */
  maxResponseBytes?: number
}

export type SignedPostResult =
  | { outcome: 'delivered'; status: number; body: string; latencyMs: number; truncated: boolean }
  | { outcome: 'failed' | 'retry'; status: number | null; body: string | null; latencyMs: number | null; error: string }

export async function signedPost(kernel: Pick<Kernel, 'config'>, post: SignedPost): Promise<SignedPostResult> {
  const timestamp = Math.floor(post.at.getTime() / 1000)
  const headers = {
    'Content-Type': 'application/json',
    'X-Service-Event': post.event,
    'X-Service-Signature': signDelivery(post.secret, timestamp, post.body),
    'X-Service-Timestamp': String(timestamp),
    'X-Service-Delivery': post.deliveryId,
  }
  try {
    const res = await outboundFetch(
      post.url,
      {
        method: 'POST',
        headers,
        body: post.body,
        timeoutMs: post.timeoutMs ?? kernel.config.webhookTimeoutMs,
        maxResponseBytes: post.maxResponseBytes ?? RESPONSE_BODY_LIMIT,
      },
      { allowPrivate: kernel.config.outboundAllowPrivate },
    )
    const base = { status: res.status, body: res.body, latencyMs: res.latencyMs }
    if (res.status >= 200 && res.status < 300) return { outcome: 'delivered', ...base, truncated: res.truncated }
    if (res.status >= 500) return { outcome: 'retry', ...base, error: `the receiver answered ${res.status}` }
    const why = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : ''
    return { outcome: 'failed', ...base, error: `the receiver answered ${res.status}${why}` }
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err
    // A refused address or an invalid URL will not get better by waiting; the network might.
    const retry = err.kind === 'timeout' || err.kind === 'connection_failed' || err.kind === 'dns_failed'
    return { outcome: retry ? 'retry' : 'failed', status: null, body: null, latencyMs: null, error: `${err.kind}: ${err.message}` }
  }
}
