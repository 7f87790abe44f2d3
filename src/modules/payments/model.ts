import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { NullableTimestamp } from '../../kernel/schemas'

export const PaymentErrors = {
  providerError: defineError('payment_provider_error', 502, 'The payment provider refused or did not answer; the order stays pending with `payment_error`.'),
  invalidSignature: defineError('invalid_signature', 400, 'The Stripe-Signature header is missing, malformed or does not match the body; nothing was changed.'),
  staleSignature: defineError('stale_signature', 400, 'The Stripe-Signature timestamp is more than 300 s from now (a replay); nothing was changed.'),
  notConfigured: defineError('payments_not_configured', 404, 'No Stripe webhook secret is configured for this endpoint.'),
}

export const StripeKeysBody = t.Object({
  secret_key: t.String({
    pattern: '^(sk|rk)_(test|live)_[A-Za-z0-9_]{8,200}$',
    error: 'must be a Stripe secret or restricted key (sk_test_…, sk_live_…, rk_…)',
    description: 'Stripe secret key (sk_live_…, sk_test_…) or restricted key (rk_…) with Checkout Sessions write access',
  }),
  webhook_secret: t.String({
    pattern: '^whsec_[A-Za-z0-9+/=_]{8,200}$',
    error: 'must be a Stripe webhook signing secret (whsec_…)',
    description: 'The signing secret of the webhook endpoint created in Stripe for `webhook_url`',
  }),
})
export type StripeKeysInput = typeof StripeKeysBody.static

export const StripeSettingsModel = t.Object({
  source: t.Union([t.Literal('space'), t.Literal('instance'), t.Null()], {
    description: 'Whose keys take this Space’s payments: its own, the instance’s (STRIPE_SECRET_KEY), or none (manual payment)',
  }),
  secret_key: t.Union([t.String(), t.Null()], { description: 'The Space’s own secret key, masked (sk_test_…abcd)' }),
  webhook_secret: t.Union([t.String(), t.Null()], { description: 'The Space’s own webhook secret, masked (whsec_…wxyz)' }),
  webhook_url: t.String({ description: 'The endpoint to register in Stripe for the Space’s own keys (event checkout.session.completed)' }),
  updated_at: NullableTimestamp,
})
export type StripeSettingsView = typeof StripeSettingsModel.static

export const WebhookReceived = t.Object({
  received: t.Boolean(),
  duplicate: t.Optional(t.Boolean({ description: 'This event id was applied before: nothing changed' })),
  ignored: t.Optional(t.Boolean({ description: 'An event type the service does not act on' })),
})
