import { eq } from 'drizzle-orm'
import { paymentEvents, stripeAccounts } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import type { Tx } from '../../kernel/db'
import { PaymentErrors, type StripeKeysInput, type StripeSettingsView } from './model'
import { checkStripeSignature, type CheckoutLine, createCheckoutSession, StripeError } from './stripe'
import './events'

const SECRET_KEY_CONTEXT = 'stripe-secret-key'
const WEBHOOK_SECRET_CONTEXT = 'stripe-webhook-secret'

/** `sk_test_…abcd`: the key's kind and its last four characters, nothing more. */
export function maskKey(key: string): string {
  const cut = key.lastIndexOf('_')
  return `${key.slice(0, cut + 1)}…${key.slice(-4)}`
}

export const spaceWebhookUrl = (origin: string, spaceSlug: string) => `${origin}/v1/payments/stripe/webhook/${spaceSlug}`

export async function stripeSettings(kernel: Kernel, access: SpaceAccess, origin: string): Promise<StripeSettingsView> {
  const [row] = await kernel.db.db.select().from(stripeAccounts).where(eq(stripeAccounts.spaceId, access.space.id)).limit(1)
  return {
    source: row ? 'space' : kernel.config.stripeSecretKey ? 'instance' : null,
    secret_key: row?.secretKeyHint ?? null,
    webhook_secret: row?.webhookSecretHint ?? null,
    webhook_url: spaceWebhookUrl(origin, access.space.slug),
    updated_at: row?.updatedAt.toISOString() ?? null,
  }
}

/** Stores a Space's own Stripe keys, sealed; the answer shows them masked. */
export async function setStripeKeys(kernel: Kernel, access: SpaceAccess, input: StripeKeysInput, origin: string): Promise<StripeSettingsView> {
  const values = {
    spaceId: access.space.id,
    secretKeySealed: kernel.secrets.seal(input.secret_key, SECRET_KEY_CONTEXT),
    webhookSecretSealed: kernel.secrets.seal(input.webhook_secret, WEBHOOK_SECRET_CONTEXT),
    secretKeyHint: maskKey(input.secret_key),
    webhookSecretHint: maskKey(input.webhook_secret),
    updatedAt: kernel.clock.now(),
  }
  await kernel.db.db
    .insert(stripeAccounts)
    .values(values)
    .onConflictDoUpdate({ target: stripeAccounts.spaceId, set: { ...values, spaceId: undefined } as never })
  return stripeSettings(kernel, access, origin)
}

export async function deleteStripeKeys(kernel: Kernel, access: SpaceAccess): Promise<void> {
  await kernel.db.db.delete(stripeAccounts).where(eq(stripeAccounts.spaceId, access.space.id))
}

interface SpaceKeys {
  account: 'space' | 'instance'
  secretKey: string
}

async function spaceKeys(kernel: Kernel, spaceId: number): Promise<SpaceKeys | null> {
  const [row] = await kernel.db.db
    .select({ sealed: stripeAccounts.secretKeySealed })
    .from(stripeAccounts)
    .where(eq(stripeAccounts.spaceId, spaceId))
    .limit(1)
  if (row) {
    try {
      return { account: 'space', secretKey: kernel.secrets.open(row.sealed, SECRET_KEY_CONTEXT) }
    } catch {
      throw PaymentErrors.providerError('The Space’s Stripe key cannot be decrypted (was SERVICE_SECRET_KEY changed?); set the keys again.')
    }
  }
  return kernel.config.stripeSecretKey ? { account: 'instance', secretKey: kernel.config.stripeSecretKey } : null
}

/** Whose Stripe keys take a Space's payments: its own, the instance's, or none (manual payment). */
export async function paymentAccountOf(kernel: Kernel, spaceId: number): Promise<'space' | 'instance' | null> {
  const [row] = await kernel.db.db.select({ id: stripeAccounts.spaceId }).from(stripeAccounts).where(eq(stripeAccounts.spaceId, spaceId)).limit(1)
  return row ? 'space' : kernel.config.stripeSecretKey ? 'instance' : null
}

export interface CheckoutInput {
  orderId: string
  orderNumber: string
  currency: string
  email: string
  lines: CheckoutLine[]
  successUrl: string
  cancelUrl: string
  createdAt: Date
}

/**
 * A hosted Stripe Checkout Session for an order (never inside a transaction: it is network I/O). Expires 31 minutes
 * after the order (Stripe's minimum is 30 minutes after the session's creation), just after the job releasing unpaid
 * reservations. Throws 502 payment_provider_error with Stripe's reason.
 */
export async function startCheckout(kernel: Kernel, spaceId: number, input: CheckoutInput): Promise<{ url: string; sessionId: string }> {
  const keys = await spaceKeys(kernel, spaceId)
  if (!keys) throw PaymentErrors.providerError('No Stripe keys are configured.')
  try {
    const s = await createCheckoutSession(kernel, {
      secretKey: keys.secretKey,
      orderId: input.orderId,
      orderNumber: input.orderNumber,
      currency: input.currency,
      email: input.email,
      lines: input.lines,
      successUrl: input.successUrl,
      cancelUrl: input.cancelUrl,
      expiresAt: Math.floor(kernel.clock.ms() / 1000) + 31 * 60,
    })
    return { url: s.url, sessionId: s.id }
  } catch (err) {
    if (err instanceof StripeError) throw PaymentErrors.providerError(err.message)
    throw err
  }
}

interface StripeEvent {
  id: string
  type: string
  data: { object: Record<string, unknown> }
}

function parseEvent(body: unknown): StripeEvent | null {
  if (!body || typeof body !== 'object') return null
  const e = body as Record<string, unknown>
  const data = e.data as Record<string, unknown> | undefined
  if (typeof e.id !== 'string' || !e.id || e.id.length > 255 || typeof e.type !== 'string') return null
  if (!data || typeof data.object !== 'object' || data.object === null) return null
  return e as unknown as StripeEvent
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : null)

/** The plan a subscription object names: `metadata.plan`, else its first price's `lookup_key`. */
function planOf(sub: Record<string, unknown>): string | null {
  const meta = (sub.metadata ?? {}) as Record<string, unknown>
  if (str(meta.plan)) return meta.plan as string
  const items = (sub.items as { data?: { price?: { lookup_key?: unknown } }[] } | undefined)?.data
  return str(items?.[0]?.price?.lookup_key)
}

export type WebhookTarget = { account: 'instance' } | { account: 'space'; spaceId: number }

/**
 * A signed Stripe event (`POST /v1/payments/stripe/webhook[/{space}]`): verified against the endpoint's signing
 * secret, then applied once per event id, in one transaction with the id's record and the events it emits.
 */
export async function receiveStripeEvent(
  kernel: Kernel,
  target: WebhookTarget,
  raw: Uint8Array,
  body: unknown,
  signature: string | null,
): Promise<{ received: true; duplicate?: true; ignored?: true }> {
  const secret = await webhookSecretOf(kernel, target)
  if (!secret) throw PaymentErrors.notConfigured()
  const check = checkStripeSignature(signature, raw, secret, Math.floor(kernel.clock.ms() / 1000))
  if (!check.ok) throw check.reason === 'stale' ? PaymentErrors.staleSignature() : PaymentErrors.invalidSignature()
  const event = parseEvent(body)
  if (!event) throw PaymentErrors.invalidSignature('The signed body is not a Stripe event.')
  const obj = event.data.object
  const spaceId = target.account === 'space' ? target.spaceId : null
  const record = (tx: Tx) =>
    tx
      .insert(paymentEvents)
      .values({ provider: 'stripe', eventId: event.id, type: event.type.slice(0, 200), spaceId, processedAt: kernel.clock.now() })
      .onConflictDoNothing()
      .returning({ id: paymentEvents.eventId })

  if (event.type === 'checkout.session.completed' || event.type === 'checkout.session.async_payment_succeeded') {
    const orderId = str(obj.client_reference_id)
    const paid = obj.payment_status === 'paid' || obj.payment_status === 'no_payment_required'
    if (!orderId || !paid) return { received: true, ignored: true }
    return transact(kernel, async (tx, emit) => {
      if (!(await record(tx)).length) return { received: true as const, duplicate: true as const }
      await emit({
        type: 'payment.succeeded',
        spaceId,
        payload: {
          provider: 'stripe',
          provider_event_id: event.id,
          account: target.account,
          order_id: orderId,
          session_id: str(obj.id) ?? '',
          amount_total: Number.isSafeInteger(obj.amount_total) ? (obj.amount_total as number) : null,
          currency: str(obj.currency),
        },
      })
      return { received: true as const }
    })
  }
  if (event.type === 'checkout.session.expired') {
    const orderId = str(obj.client_reference_id)
    if (!orderId) return { received: true, ignored: true }
    return transact(kernel, async (tx, emit) => {
      if (!(await record(tx)).length) return { received: true as const, duplicate: true as const }
      await emit({
        type: 'payment.expired',
        spaceId,
        payload: { provider: 'stripe', provider_event_id: event.id, account: target.account, order_id: orderId, session_id: str(obj.id) ?? '' },
      })
      return { received: true as const }
    })
  }
  if (event.type.startsWith('customer.subscription.')) {
    // Tenant-level state moves only on the instance's receiver (STRIPE_WEBHOOK_SECRET, the operator's account). A
    // Space's own receiver is verified with a secret any admin of that Space sets, so what it receives speaks for the
    // shop's payments only: a subscription event there is acknowledged and changes nothing.
    if (target.account === 'space') return { received: true, ignored: true }
    const meta = (obj.metadata ?? {}) as Record<string, unknown>
    const tenantId = Number(str(meta.tenant_id) ?? Number.NaN)
    const plan = event.type === 'customer.subscription.deleted' || obj.status === 'canceled' ? 'free' : planOf(obj)
    if (!Number.isSafeInteger(tenantId) || !plan) return { received: true, ignored: true }
    return transact(kernel, async (tx, emit) => {
      if (!(await record(tx)).length) return { received: true as const, duplicate: true as const }
      await emit({
        type: 'payment.subscription_changed',
        spaceId: null,
        payload: { tenant_id: tenantId, plan, provider_event_id: event.id, provider: 'stripe' },
      })
      return { received: true as const }
    })
  }
  return { received: true, ignored: true }
}

async function webhookSecretOf(kernel: Kernel, target: WebhookTarget): Promise<string | null> {
  if (target.account === 'instance') return kernel.config.stripeWebhookSecret
  const [row] = await kernel.db.db
    .select({ sealed: stripeAccounts.webhookSecretSealed })
    .from(stripeAccounts)
    .where(eq(stripeAccounts.spaceId, target.spaceId))
    .limit(1)
  if (!row) return null
  try {
    return kernel.secrets.open(row.sealed, WEBHOOK_SECRET_CONTEXT)
  } catch {
    return null
  }
}
