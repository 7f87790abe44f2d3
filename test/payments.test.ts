import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

const INSTANCE_KEY = 'sk_test_instance1234567890'
const INSTANCE_WHSEC = 'whsec_instanceSecret1234567890'
const SPACE_KEY = 'sk_test_spaceKeyABCDEFGH9876'
const SPACE_WHSEC = 'whsec_spaceSecretXYZ1234567890'

/** A fake Stripe API on 127.0.0.1: records Checkout Session requests and answers as Stripe does (or fails). */
interface FakeCall {
  path: string
  authorization: string | null
  idempotencyKey: string | null
  form: URLSearchParams
}
const calls: FakeCall[] = []
let failWith: { status: number; body: unknown } | null = null
let fake: ReturnType<typeof Bun.serve>

let t: TestApp
let owner: { token: string; tenant: { id: number } }
let shop: string // its own Stripe keys
let instanceShop: string // the instance's keys
let editorToken: string

/** Stripe's scheme, computed independently of the service: HMAC-SHA256 over "<t>.<raw body>", hex. */
const sign = (secret: string, body: string, at = Math.floor(t.clock.ms() / 1000)) =>
  `t=${at},v1=${createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')}`

let eventN = 0
const completed = (orderId: string, amount: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: `evt_test_${++eventN}_${crypto.randomUUID().slice(0, 8)}`,
    object: 'event',
    type: 'checkout.session.completed',
    data: { object: { id: `cs_test_${eventN}`, object: 'checkout.session', client_reference_id: orderId, payment_status: 'paid', amount_total: amount, currency: 'eur', ...extra } },
  })

const deliver = (path: string, body: string, signature: string | null) =>
  t.request('POST', `/v1/payments/stripe/webhook${path}`, {
    raw: body,
    headers: { 'Content-Type': 'application/json', ...(signature === null ? {} : { 'Stripe-Signature': signature }) },
  })

async function order(space: string, body: Record<string, unknown> = {}, quantity = 1, stock: number | null = 10) {
  const slug = `p-${crypto.randomUUID().slice(0, 8)}`
  const p = await t.request('POST', `/v1/spaces/${space}/products`, {
    token: owner.token,
    body: { slug, name: { en: `Poster ${slug}` }, price: 1500, currency: 'EUR', stock },
  })
  expect(p.status).toBe(201)
  const cart = (await t.request('POST', `/v1/cdn/${space}/carts`)).body.data.uuid
  expect((await t.request('POST', `/v1/cdn/${space}/carts/${cart}/items`, { body: { product: slug, quantity } })).status).toBe(201)
  const r = await t.request('POST', `/v1/cdn/${space}/carts/${cart}/checkout`, { body: { email: 'buyer@example.com', name: 'Buyer', ...body } })
  return { product: p.body.data, cart, res: r }
}

const getOrder = async (space: string, id: string) => (await t.request('GET', `/v1/spaces/${space}/orders/${id}`, { token: owner.token })).body.data
const stockOf = async (space: string, id: string) => (await t.request('GET', `/v1/spaces/${space}/products/${id}`, { token: owner.token })).body.data.stock

beforeAll(async () => {
  fake = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url)
      const form = new URLSearchParams(await req.text())
      calls.push({ path: url.pathname, authorization: req.headers.get('authorization'), idempotencyKey: req.headers.get('idempotency-key'), form })
      if (failWith) return Response.json(failWith.body, { status: failWith.status })
      if (req.method !== 'POST' || url.pathname !== '/v1/checkout/sessions') return Response.json({ error: { message: 'Unrecognized request URL' } }, { status: 404 })
      const id = `cs_test_${calls.length}`
      return Response.json({ id, object: 'checkout.session', url: `https://checkout.stripe.com/c/pay/${id}`, client_reference_id: form.get('client_reference_id') })
    },
  })
  t = await testApp({}, { STRIPE_API_BASE: `http://127.0.0.1:${fake.port}`, STRIPE_SECRET_KEY: INSTANCE_KEY, STRIPE_WEBHOOK_SECRET: INSTANCE_WHSEC })
  owner = await t.register()
  shop = (await t.createSpace(owner.token)).slug
  instanceShop = (await t.createSpace(owner.token)).slug
  editorToken = await t.member(owner.tenant.id, shop, 'editor')
  for (const s of [shop, instanceShop]) {
    const r = await t.request('PATCH', `/v1/spaces/${s}/shop`, { token: owner.token, body: { success_url: 'https://shop.example/thanks/{ORDER_NUMBER}', cancel_url: 'https://shop.example/cart' } })
    expect(r.status).toBe(200)
  }
}, 300_000) // building the app migrates a fresh database: minutes on a loaded machine

afterAll(async () => {
  await t.close()
  fake.stop(true)
})

describe('Stripe keys of a Space', () => {
  test('admins set them; answers show them masked; stored sealed; editors cannot', async () => {
    const before = await t.request('GET', `/v1/spaces/${shop}/payments/stripe`, { token: owner.token })
    expect(before.body.data).toMatchObject({ source: 'instance', secret_key: null })
    const put = await t.request('PUT', `/v1/spaces/${shop}/payments/stripe`, { token: owner.token, body: { secret_key: SPACE_KEY, webhook_secret: SPACE_WHSEC } })
    expect(put.status).toBe(200)
    expect(put.body.data).toMatchObject({ source: 'space', secret_key: 'sk_test_…9876', webhook_secret: 'whsec_…7890' })
    expect(put.body.data.webhook_url).toEndWith(`/v1/payments/stripe/webhook/${shop}`)
    expect(put.text).not.toContain(SPACE_KEY)
    const [row] = await t.kernel.db.query<Record<string, string>>('select * from payment_stripe_accounts')
    expect(JSON.stringify(row)).not.toContain(SPACE_KEY)
    expect(JSON.stringify(row)).not.toContain(SPACE_WHSEC)
    expect((await t.request('PUT', `/v1/spaces/${shop}/payments/stripe`, { token: editorToken, body: { secret_key: SPACE_KEY, webhook_secret: SPACE_WHSEC } })).status).toBe(403)
    expect((await t.request('GET', `/v1/spaces/${shop}/payments/stripe`, { token: editorToken })).status).toBe(403)
    for (const body of [{ secret_key: 'pk_test_12345678', webhook_secret: SPACE_WHSEC }, { secret_key: SPACE_KEY, webhook_secret: 'secret' }, { secret_key: SPACE_KEY }]) {
      expect((await t.request('PUT', `/v1/spaces/${shop}/payments/stripe`, { token: owner.token, body })).status).toBe(422)
    }
  })
})

describe('checkout through Stripe', () => {
  test('a Checkout Session is created with the Space’s key, the order lines and the order id; the order carries payment_url', async () => {
    calls.length = 0
    const { res } = await order(shop, {}, 2)
    expect(res.status).toBe(201)
    const o = res.body.data
    expect(o).toMatchObject({ status: 'pending', payment_provider: 'stripe', payment_error: null })
    expect(o.payment_url).toStartWith('https://checkout.stripe.com/c/pay/cs_test_')
    expect(calls).toHaveLength(1)
    const c = calls[0]!
    expect(c.path).toBe('/v1/checkout/sessions')
    expect(c.authorization).toBe(`Bearer ${SPACE_KEY}`)
    expect(c.idempotencyKey).toBe(`checkout-${o.id}`)
    expect(c.form.get('mode')).toBe('payment')
    expect(c.form.get('client_reference_id')).toBe(o.id)
    expect(c.form.get('line_items[0][price_data][unit_amount]')).toBe('1500')
    expect(c.form.get('line_items[0][quantity]')).toBe('2')
    expect(c.form.get('line_items[0][price_data][currency]')).toBe('eur')
    expect(c.form.get('success_url')).toBe(`https://shop.example/thanks/${o.number.slice(1)}`)
    expect(c.form.get('customer_email')).toBe('buyer@example.com')
    expect(Number(c.form.get('expires_at'))).toBeGreaterThanOrEqual(Math.floor(t.clock.ms() / 1000) + 30 * 60)
  })

  test('the instance’s key serves a Space without its own', async () => {
    calls.length = 0
    const { res } = await order(instanceShop, { success_url: 'https://other.example/ok' })
    expect(res.status).toBe(201)
    expect(calls[0]!.authorization).toBe(`Bearer ${INSTANCE_KEY}`)
    expect(calls[0]!.form.get('success_url')).toBe('https://other.example/ok')
  })

  test('a provider failure: 502 payment_provider_error, the order stays pending with payment_error and its stock reserved', async () => {
    failWith = { status: 402, body: { error: { message: 'Your card was declined.', type: 'card_error' } } }
    try {
      const { res, product, cart } = await order(shop, {}, 3)
      expect(res.status).toBe(502)
      expect(res.body.error).toBe('payment_provider_error')
      expect(res.body.message).toContain('Your card was declined.')
      const orderId = res.body.details.order_id
      const o = await getOrder(shop, orderId)
      expect(o.status).toBe('pending')
      expect(o.payment_error).toContain('Your card was declined.')
      expect(await stockOf(shop, product.id)).toBe(7)
      expect((await t.request('POST', `/v1/cdn/${shop}/carts/${cart}/items`, { body: { product: product.slug, quantity: 1 } })).body.error).toBe('cart_closed')
    } finally {
      failWith = null
    }
    // The provider not answering at all is the same answer.
    const stopped = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
    const port = stopped.port
    stopped.stop(true)
    const unreachable = await testApp({}, { STRIPE_API_BASE: `http://127.0.0.1:${port}`, STRIPE_SECRET_KEY: INSTANCE_KEY })
    try {
      const u = await unreachable.register()
      const s = (await unreachable.createSpace(u.token)).slug
      await unreachable.request('POST', `/v1/spaces/${s}/products`, { token: u.token, body: { slug: 'a', name: { en: 'A' }, price: 1, currency: 'EUR' } })
      const c = (await unreachable.request('POST', `/v1/cdn/${s}/carts`)).body.data.uuid
      await unreachable.request('POST', `/v1/cdn/${s}/carts/${c}/items`, { body: { product: 'a', quantity: 1 } })
      const r = await unreachable.request('POST', `/v1/cdn/${s}/carts/${c}/checkout`, { body: { email: 'b@example.com', name: 'B', success_url: 'https://x.example/' } })
      expect(r.status).toBe(502)
      expect(r.body.error).toBe('payment_provider_error')
    } finally {
      await unreachable.close()
    }
  })

  test('with Stripe and no success_url anywhere the checkout is 422 and takes nothing', async () => {
    const fresh = (await t.createSpace(owner.token)).slug
    const { res, product } = await order(fresh)
    expect(res.status).toBe(422)
    expect(res.body.errors.success_url).toBeDefined()
    expect(await stockOf(fresh, product.id)).toBe(10)
  })

  test('unpaid Stripe orders are cancelled 30 minutes after checkout and their stock returned', async () => {
    const { res, product } = await order(instanceShop, {}, 4)
    expect(await stockOf(instanceShop, product.id)).toBe(6)
    await t.kernel.jobs.runDueJobs()
    t.clock.advance(20 * 60_000)
    await t.kernel.jobs.runDueJobs()
    expect((await getOrder(instanceShop, res.body.data.id)).status).toBe('pending')
    t.clock.advance(15 * 60_000)
    await t.kernel.jobs.runDueJobs()
    const o = await getOrder(instanceShop, res.body.data.id)
    expect(o).toMatchObject({ status: 'cancelled', cancel_reason: 'payment_timeout' })
    expect(await stockOf(instanceShop, product.id)).toBe(10)
  })
})

describe('signed webhook receivers', () => {
  test('checkout.session.completed signed with the Space’s secret marks the order paid, once per event id', async () => {
    const { res } = await order(shop)
    const o = res.body.data
    const body = completed(o.id, 1500)
    const first = await deliver(`/${shop}`, body, sign(SPACE_WHSEC, body))
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ received: true })
    const paid = await getOrder(shop, o.id)
    expect(paid.status).toBe('paid')
    expect(paid.paid_at).not.toBeNull()
    const replay = await deliver(`/${shop}`, body, sign(SPACE_WHSEC, body))
    expect(replay.status).toBe(200)
    expect(replay.body.duplicate).toBe(true)
    const [events] = await t.kernel.db.query<{ n: number }>("select count(*)::int as n from events where type = 'order.paid' and payload->'order'->>'id' = $1", [o.id])
    expect(events!.n).toBe(1)
    // Marked paid by Stripe, the shop fulfils it.
    expect((await t.request('PATCH', `/v1/spaces/${shop}/orders/${o.id}`, { token: owner.token, body: { status: 'fulfilled' } })).status).toBe(200)
  })

  test('bad, missing, stale or wrong-secret signatures are 400 and change nothing', async () => {
    const { res } = await order(shop)
    const o = res.body.data
    const body = completed(o.id, 1500)
    const now = Math.floor(t.clock.ms() / 1000)
    const cases: [string | null, string][] = [
      [null, 'invalid_signature'],
      ['garbage', 'invalid_signature'],
      [`t=${now},v1=${'0'.repeat(64)}`, 'invalid_signature'],
      [sign(INSTANCE_WHSEC, body), 'invalid_signature'],
      [sign(SPACE_WHSEC, body.replace('"paid"', '"unpaid"')), 'invalid_signature'],
      [sign(SPACE_WHSEC, body, now - 301), 'stale_signature'],
      [sign(SPACE_WHSEC, body, now + 301), 'stale_signature'],
    ]
    for (const [sig, code] of cases) {
      const r = await deliver(`/${shop}`, body, sig)
      expect(r.status).toBe(400)
      expect(r.body.error).toBe(code)
    }
    // Signed right but with a body changed after signing.
    const tampered = await deliver(`/${shop}`, body.replace('1500', '1'), sign(SPACE_WHSEC, body))
    expect(tampered.status).toBe(400)
    expect((await getOrder(shop, o.id)).status).toBe('pending')
    // Any of several v1 signatures may match (a secret being rolled); 299 s old is still fresh.
    const good = sign(SPACE_WHSEC, body, now - 299)
    const [ts, v1] = good.split(',')
    const r = await deliver(`/${shop}`, body, `${ts},v1=${'a'.repeat(64)},${v1},v0=ignored`)
    expect(r.status).toBe(200)
    expect((await getOrder(shop, o.id)).status).toBe('paid')
  })

  test('the instance endpoint pays instance-keyed orders only; unknown types are 200 and ignored', async () => {
    const { res } = await order(instanceShop)
    const o = res.body.data
    const body = completed(o.id, 1500)
    expect((await deliver('', body, sign(INSTANCE_WHSEC, body))).status).toBe(200)
    expect((await getOrder(instanceShop, o.id)).status).toBe('paid')
    // An order paid through the Space's own account cannot be confirmed by the instance's endpoint.
    const spaceOrder = (await order(shop)).res.body.data
    const other = completed(spaceOrder.id, 1500)
    expect((await deliver('', other, sign(INSTANCE_WHSEC, other))).status).toBe(200)
    expect((await getOrder(shop, spaceOrder.id)).status).toBe('pending')
    // A payment of another amount is recorded, not applied.
    const wrong = completed(spaceOrder.id, 1)
    expect((await deliver(`/${shop}`, wrong, sign(SPACE_WHSEC, wrong))).status).toBe(200)
    const o2 = await getOrder(shop, spaceOrder.id)
    expect(o2.status).toBe('pending')
    expect(o2.payment_error).toContain('Stripe reports 1')
    const unknown = JSON.stringify({ id: 'evt_unknown_1', type: 'invoice.finalized', data: { object: {} } })
    const r = await deliver('', unknown, sign(INSTANCE_WHSEC, unknown))
    expect(r.status).toBe(200)
    expect(r.body.ignored).toBe(true)
    // Unknown Space, and a Space without its own keys.
    expect((await deliver('/no-such-space', unknown, sign(SPACE_WHSEC, unknown))).status).toBe(404)
    expect((await deliver(`/${instanceShop}`, unknown, sign(INSTANCE_WHSEC, unknown))).status).toBe(404)
    const notJson = await t.request('POST', '/v1/payments/stripe/webhook', { raw: 'hello', headers: { 'Content-Type': 'text/plain', 'Stripe-Signature': sign(INSTANCE_WHSEC, 'hello') } })
    expect([400, 415]).toContain(notJson.status)
  })

  test('checkout.session.expired releases the reservation: the pending order is cancelled and its stock returned, once per event id', async () => {
    const expired = (orderId: string, sessionId: string, id = `evt_exp_${++eventN}_${crypto.randomUUID().slice(0, 8)}`) =>
      JSON.stringify({ id, object: 'event', type: 'checkout.session.expired', data: { object: { id: sessionId, object: 'checkout.session', client_reference_id: orderId, status: 'expired', payment_status: 'unpaid' } } })
    const { res, product } = await order(shop, {}, 3)
    const o = res.body.data
    const session = o.payment_url.split('/').at(-1)
    expect(await stockOf(shop, product.id)).toBe(7)
    const body = expired(o.id, session)
    // Bad signature, another session of the order, or the instance's endpoint for a Space-keyed order: nothing changes.
    expect((await deliver(`/${shop}`, body, sign(INSTANCE_WHSEC, body))).status).toBe(400)
    const otherSession = expired(o.id, 'cs_test_not_this_one')
    expect((await deliver(`/${shop}`, otherSession, sign(SPACE_WHSEC, otherSession))).status).toBe(200)
    const viaInstance = expired(o.id, session)
    expect((await deliver('', viaInstance, sign(INSTANCE_WHSEC, viaInstance))).status).toBe(200)
    expect((await getOrder(shop, o.id)).status).toBe('pending')
    expect(await stockOf(shop, product.id)).toBe(7)

    const first = await deliver(`/${shop}`, body, sign(SPACE_WHSEC, body))
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ received: true })
    const cancelled = await getOrder(shop, o.id)
    expect(cancelled).toMatchObject({ status: 'cancelled', cancel_reason: 'payment_expired' })
    expect(cancelled.cancelled_at).not.toBeNull()
    expect(await stockOf(shop, product.id)).toBe(10)
    // The same event again, and another expiry event of the same session: the stock comes back once.
    expect((await deliver(`/${shop}`, body, sign(SPACE_WHSEC, body))).body.duplicate).toBe(true)
    const again = expired(o.id, session)
    expect((await deliver(`/${shop}`, again, sign(SPACE_WHSEC, again))).status).toBe(200)
    expect(await stockOf(shop, product.id)).toBe(10)
    const [events] = await t.kernel.db.query<{ n: number }>("select count(*)::int as n from events where type = 'order.cancelled' and payload->'order'->>'id' = $1", [o.id])
    expect(events!.n).toBe(1)

    // A paid order is not touched by a late expiry; an event without an order reference is ignored.
    const paid = (await order(instanceShop)).res.body.data
    const pay = completed(paid.id, 1500)
    expect((await deliver('', pay, sign(INSTANCE_WHSEC, pay))).status).toBe(200)
    const late = expired(paid.id, paid.payment_url.split('/').at(-1))
    expect((await deliver('', late, sign(INSTANCE_WHSEC, late))).status).toBe(200)
    expect((await getOrder(instanceShop, paid.id)).status).toBe('paid')
    const bare = JSON.stringify({ id: 'evt_exp_bare', type: 'checkout.session.expired', data: { object: { id: 'cs_x' } } })
    expect((await deliver('', bare, sign(INSTANCE_WHSEC, bare))).body.ignored).toBe(true)
  })

  test('customer.subscription.* emits payment.subscription_changed: billing moves the Tenant’s plan once per event id', async () => {
    const planOf = async () => (await t.request('GET', `/v1/spaces/${shop}/billing`, { token: owner.token })).body.data.plan
    const sub = (id: string, plan: string) =>
      JSON.stringify({ id, type: 'customer.subscription.updated', data: { object: { id: 'sub_1', status: 'active', metadata: { tenant_id: String(owner.tenant.id), plan } } } })
    const body = sub('evt_sub_1', 'pro')
    expect((await deliver('', body, sign(INSTANCE_WHSEC, body))).status).toBe(200)
    expect(await planOf()).toBe('pro')
    const unlimited = sub('evt_sub_2', 'unlimited')
    await deliver('', unlimited, sign(INSTANCE_WHSEC, unlimited))
    expect(await planOf()).toBe('unlimited')
    // The first event again changes nothing.
    expect((await deliver('', body, sign(INSTANCE_WHSEC, body))).body.duplicate).toBe(true)
    expect(await planOf()).toBe('unlimited')
  })

  test('a Space’s own receiver never moves the Tenant’s plan: an admin’s self-signed subscription events are ignored (also an admin from another Tenant); the instance receiver still moves it', async () => {
    // Plans are the operator's here: self-serve is off, so no Space admin may change the plan at all.
    expect(t.config.billingSelfServe).toBe(false)
    const space = (await t.createSpace(owner.token)).slug
    const planOf = async () => (await t.request('GET', `/v1/spaces/${space}/billing`, { token: owner.token })).body.data.plan
    const sub = (id: string, type: string, plan: string, tenantId = owner.tenant.id) =>
      JSON.stringify({ id, type, data: { object: { id: 'sub_x', status: 'active', metadata: { tenant_id: String(tenantId), plan } } } })
    const viaInstance = sub('evt_plan_free', 'customer.subscription.updated', 'free')
    expect((await deliver('', viaInstance, sign(INSTANCE_WHSEC, viaInstance))).body).toEqual({ received: true })
    expect(await planOf()).toBe('free')

    // The Tenant's own admin points the Space's receiver at a secret of their choosing and signs an upgrade.
    const ADMIN_WHSEC = 'whsec_chosenByTheSpaceAdmin12345'
    expect((await t.request('PUT', `/v1/spaces/${space}/payments/stripe`, { token: owner.token, body: { secret_key: SPACE_KEY, webhook_secret: ADMIN_WHSEC } })).status).toBe(200)
    for (const [i, type] of ['customer.subscription.created', 'customer.subscription.updated'].entries()) {
      const forged = sub(`evt_forged_up_${i}`, type, 'unlimited')
      const r = await deliver(`/${space}`, forged, sign(ADMIN_WHSEC, forged))
      expect(r.status).toBe(200)
      expect(r.body).toEqual({ received: true, ignored: true })
    }
    expect(await planOf()).toBe('free')

    // The instance's receiver still moves the plan.
    const pro = sub('evt_plan_pro', 'customer.subscription.updated', 'pro')
    expect((await deliver('', pro, sign(INSTANCE_WHSEC, pro))).status).toBe(200)
    expect(await planOf()).toBe('pro')

    // An admin invited from another Tenant sets the Space's keys too and signs a cancellation of the owner's plan.
    const stranger = await t.register()
    const [s] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [space])
    await t.kernel.db.query("insert into memberships (user_id, space_id, role, created_at) values ($1, $2, 'admin', now())", [stranger.user.id, s!.id])
    const STRANGER_WHSEC = 'whsec_chosenByTheInvitedAdmin9876'
    expect((await t.request('PUT', `/v1/spaces/${space}/payments/stripe`, { token: stranger.token, body: { secret_key: SPACE_KEY, webhook_secret: STRANGER_WHSEC } })).status).toBe(200)
    for (const [i, type] of ['customer.subscription.deleted', 'customer.subscription.updated'].entries()) {
      const forged = sub(`evt_forged_down_${i}`, type, 'free')
      const r = await deliver(`/${space}`, forged, sign(STRANGER_WHSEC, forged))
      expect(r.status).toBe(200)
      expect(r.body).toEqual({ received: true, ignored: true })
    }
    expect(await planOf()).toBe('pro')
    const [moved] = await t.kernel.db.query<{ n: number }>("select count(*)::int as n from events where type = 'payment.subscription_changed' and payload->>'provider_event_id' like 'evt_forged_%'")
    expect(moved!.n).toBe(0)
  })
})
