import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Kernel } from '../../kernel/kernel'
import { OutboundError, outboundFetch } from '../../kernel/outbound'

/** Stripe's own default tolerance for `Stripe-Signature` timestamps. */
export const SIGNATURE_TOLERANCE_SECONDS = 300

export type SignatureCheck = { ok: true } | { ok: false; reason: 'invalid' | 'stale' }

/**
 * `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…][,v0=…]`, as Stripe documents it: the expected signature
 * is HMAC-SHA256 (key: the endpoint's signing secret) over `"<t>.<raw body>"`, hex; any of the `v1` values may match
 * (several during a secret roll); other schemes are ignored; the timestamp must be within 300 s of now.
 */
export function checkStripeSignature(header: string | null, raw: Uint8Array, secret: string, nowSeconds: number): SignatureCheck {
  if (!header || header.length > 4096) return { ok: false, reason: 'invalid' }
  let timestamp: string | null = null
  const v1: string[] = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    if (eq < 1) continue
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === 't') timestamp = value
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) v1.push(value.toLowerCase())
  }
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || !v1.length) return { ok: false, reason: 'invalid' }
  const expected = Buffer.from(createHmac('sha256', secret).update(`${timestamp}.`).update(raw).digest('hex'))
  const match = v1.some((s) => timingSafeEqual(Buffer.from(s), expected))
  if (!match) return { ok: false, reason: 'invalid' }
  if (Math.abs(nowSeconds - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) return { ok: false, reason: 'stale' }
  return { ok: true }
}

export interface CheckoutLine {
  name: string
  unitAmount: number
  quantity: number
}

export interface CheckoutSessionRequest {
  secretKey: string
  orderId: string
  orderNumber: string
  currency: string
  email: string
  lines: CheckoutLine[]
  successUrl: string
  cancelUrl: string
  /** Unix seconds; Stripe allows 30 minutes to 24 hours after creation. */
  expiresAt: number
}

export class StripeError extends Error {}

/** Form encoding as Stripe's API takes it (`a[b][0][c]=…`). */
function form(params: Record<string, string | number>): string {
  return Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&')
}

/** `POST /v1/checkout/sessions` (hosted Checkout, mode payment): the session's id and URL. Throws StripeError. */
export async function createCheckoutSession(kernel: Kernel, req: CheckoutSessionRequest): Promise<{ id: string; url: string }> {
  const params: Record<string, string | number> = {
    mode: 'payment',
    client_reference_id: req.orderId,
    customer_email: req.email,
    success_url: req.successUrl,
    cancel_url: req.cancelUrl,
    expires_at: req.expiresAt,
    'metadata[order_id]': req.orderId,
    'metadata[order_number]': req.orderNumber,
    'payment_intent_data[metadata][order_id]': req.orderId,
  }
  req.lines.forEach((l, i) => {
    params[`line_items[${i}][quantity]`] = l.quantity
    params[`line_items[${i}][price_data][currency]`] = req.currency.toLowerCase()
    params[`line_items[${i}][price_data][unit_amount]`] = l.unitAmount
    params[`line_items[${i}][price_data][product_data][name]`] = l.name
  })
  let res: Awaited<ReturnType<typeof outboundFetch>>
  try {
    res = await outboundFetch(
      `${kernel.config.stripeApiBase}/v1/checkout/sessions`,
      {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${req.secretKey}`,
          'Content-Type': 'application/x-www-form-urlencoded',
          'Idempotency-Key': `checkout-${req.orderId}`,
          'User-Agent': 'content-service',
        },
        body: form(params),
        timeoutMs: 15_000,
        maxResponseBytes: 256 * 1024,
      },
      // The API host is the operator's choice (Stripe's, or STRIPE_API_BASE), never a user's.
      { allowPrivate: kernel.config.stripeApiBaseSet || kernel.config.outboundAllowPrivate },
    )
  } catch (err) {
    throw new StripeError(err instanceof OutboundError ? `Stripe could not be reached: ${err.message}` : 'Stripe could not be reached')
  }
  let body: { id?: unknown; url?: unknown; error?: { message?: unknown } } = {}
  try {
    body = JSON.parse(res.body)
  } catch {}
  if (res.status < 200 || res.status >= 300) {
    const msg = typeof body.error?.message === 'string' ? body.error.message.slice(0, 500) : `HTTP ${res.status}`
    throw new StripeError(`Stripe refused the Checkout Session: ${msg}`)
  }
  if (typeof body.id !== 'string' || typeof body.url !== 'string' || !/^https?:\/\//.test(body.url)) {
    throw new StripeError('Stripe answered without a Checkout Session id and url')
  }
  return { id: body.id, url: body.url }
}
