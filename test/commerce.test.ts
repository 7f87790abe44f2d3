import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'
import { pngOf, photo } from './helpers/images'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'
import { commerceModule } from '../src/modules/commerce'

setDefaultTimeout(60_000)

let t: TestApp
let sink: SmtpSink
let owner: { token: string; tenant: { id: number } }
let editor: string
let viewer: string
let space: string
let other: string

const api = (method: string, path: string, body?: unknown, token = owner.token, headers: Record<string, string> = {}) =>
  t.request(method, `/v1/spaces/${space}${path}`, { token, body, headers })
const cdn = (method: string, path: string, body?: unknown, opts: { ip?: string; headers?: Record<string, string>; space?: string } = {}) =>
  t.request(method, `/v1/cdn/${opts.space ?? space}${path}`, { body, ip: opts.ip, headers: opts.headers })

let productN = 0
async function product(fields: Record<string, unknown> = {}, s = space) {
  productN++
  const r = await t.request('POST', `/v1/spaces/${s}/products`, {
    token: owner.token,
    body: { slug: `p-${productN}`, name: { en: `Product ${productN}` }, price: 1000, currency: 'EUR', stock: null, ...fields },
  })
  if (r.status !== 201) throw new Error(`product: ${r.status} ${r.text}`)
  return r.body.data as { id: string; slug: string; price: number; stock: number | null }
}

async function cart(s = space) {
  const r = await cdn('POST', '/carts', undefined, { space: s })
  if (r.status !== 201) throw new Error(`cart: ${r.status} ${r.text}`)
  return r.body.data.uuid as string
}

async function add(uuid: string, productRef: string, quantity = 1) {
  return cdn('POST', `/carts/${uuid}/items`, { product: productRef, quantity })
}

const buyer = { email: 'Buyer@Example.com', name: 'Ada Buyer', address: { line1: 'Main St 1', city: 'Berlin', postal_code: '10115', country: 'DE' } }

const stockOf = async (id: string) => (await api('GET', `/products/${id}`)).body.data.stock as number | null

beforeAll(async () => {
  sink = await startSmtpSink()
  t = await testApp({}, { SMTP_URL: sink.url })
  owner = await t.register()
  space = (await t.createSpace(owner.token, { default_lang: 'en', locales: ['en', 'de'] })).slug
  other = (await t.createSpace(owner.token)).slug
  editor = await t.member(owner.tenant.id, space, 'editor')
  viewer = await t.member(owner.tenant.id, space, 'viewer')
}, 300_000) // building the app migrates a fresh database: minutes on a loaded machine

afterAll(async () => {
  await t.close()
  await sink.stop()
})

describe('products', () => {
  test('create, read, list, change and delete; viewers read, editors write', async () => {
    const created = await api('POST', '/products', {
      slug: 'mug',
      name: { en: 'Mug', de: 'Tasse' },
      description: { en: 'A mug' },
      price: 1250,
      currency: 'EUR',
      stock: 5,
      attributes: { color: 'blue' },
    }, editor)
    expect(created.status).toBe(201)
    const p = created.body.data
    expect(p).toMatchObject({ slug: 'mug', name: { en: 'Mug', de: 'Tasse' }, price: 1250, currency: 'EUR', stock: 5, in_stock: true, active: true, images: [], attributes: { color: 'blue' } })
    expect((await api('GET', `/products/${p.id}`, undefined, viewer)).body.data.slug).toBe('mug')
    expect((await api('POST', '/products', { slug: 'x', name: { en: 'X' }, price: 1 }, viewer)).status).toBe(403)
    const list = await api('GET', '/products?q=mug&per_page=10', undefined, viewer)
    expect(list.status).toBe(200)
    expect(list.body.meta).toMatchObject({ total: 1, page: 1, per_page: 10 })
    const patched = await api('PATCH', `/products/${p.id}`, { price: 1300, stock: 0 }, editor)
    expect(patched.status).toBe(200)
    expect(patched.body.data).toMatchObject({ price: 1300, stock: 0, in_stock: false, name: { en: 'Mug', de: 'Tasse' } })
    expect((await api('POST', '/products', { slug: 'mug', name: { en: 'Mug 2' }, price: 1 })).body.error).toBe('product_slug_taken')
    expect((await api('DELETE', `/products/${p.id}`, undefined, editor)).status).toBe(204)
    expect((await api('GET', `/products/${p.id}`)).status).toBe(404)
    // Another Space's product is not found through this one.
    const foreign = await product({}, other)
    expect((await api('GET', `/products/${foreign.id}`)).status).toBe(404)
  })

  test('prices must be JSON integers from 0 to 100,000,000: strings, fractions, negatives and 1e20 are 422 naming price', async () => {
    for (const price of ['1000', 10.5, -1, 1e20, 100_000_001, null, true]) {
      const r = await api('POST', '/products', { slug: 'bad-price', name: { en: 'Bad' }, price })
      expect(r.status).toBe(422)
      expect(r.body.error).toBe('validation_failed')
      expect(Object.keys(r.body.errors ?? {}).some((k) => k.includes('price'))).toBe(true)
    }
    const p = await product()
    const r = await api('PATCH', `/products/${p.id}`, { price: '99' })
    expect(r.status).toBe(422)
    expect(Object.keys(r.body.errors).some((k) => k.includes('price'))).toBe(true)
  })

  test('bad input: slugs, stock, currency, locales, unknown fields, NUL in names, foreign asset uuids', async () => {
    const bad = async (body: Record<string, unknown>, field: string) => {
      const r = await api('POST', '/products', { slug: 'bad', name: { en: 'Bad' }, price: 1, ...body })
      expect(r.status).toBe(422)
      expect(Object.keys(r.body.errors ?? {}).some((k) => k.includes(field))).toBe(true)
    }
    await bad({ slug: 'Bad Slug' }, 'slug')
    await bad({ slug: '-x' }, 'slug')
    await bad({ stock: -1 }, 'stock')
    await bad({ stock: 1.5 }, 'stock')
    await bad({ currency: 'USD' }, 'currency') // the Space sells in EUR
    await bad({ currency: 'eur' }, 'currency')
    await bad({ name: { fr: 'Nom' } }, 'name')
    await bad({ name: {} }, 'name')
    await bad({ images: ['not-a-uuid'] }, 'images')
    await bad({ extra: 1 }, 'extra')
    const nul = await api('POST', '/products', { slug: 'nul', name: { en: 'a\u0000b' }, price: 1 })
    expect([400, 422]).toContain(nul.status)
    // An asset of another Space is not an image of this one.
    const fd = new FormData()
    fd.append('file', new Blob([pngOf(photo(8, 8)) as BlobPart], { type: 'image/png' }), 'x.png')
    const foreignAsset = await t.request('POST', `/v1/spaces/${other}/assets`, { token: owner.token, raw: fd })
    expect(foreignAsset.status).toBe(201)
    await bad({ images: [foreignAsset.body.data.uuid] }, 'images/0')
    await bad({ images: [crypto.randomUUID()] }, 'images/0')
  })

  test('the first product sets the Space currency; the shop settings name it too', async () => {
    const fresh = (await t.createSpace(owner.token)).slug
    const first = await t.request('POST', `/v1/spaces/${fresh}/products`, { token: owner.token, body: { slug: 'a', name: { en: 'A' }, price: 1 } })
    expect(first.status).toBe(422)
    expect(first.body.errors.currency).toBeDefined()
    await product({ currency: 'USD' }, fresh)
    const settings = await t.request('GET', `/v1/spaces/${fresh}/shop`, { token: owner.token })
    expect(settings.body.data).toMatchObject({ currency: 'USD', next_order_number: 1001 })
    const second = await t.request('POST', `/v1/spaces/${fresh}/products`, { token: owner.token, body: { slug: 'b', name: { en: 'B' }, price: 1 } })
    expect(second.status).toBe(201)
    expect(second.body.data.currency).toBe('USD')
    const change = await t.request('PATCH', `/v1/spaces/${fresh}/shop`, { token: owner.token, body: { currency: 'EUR' } })
    expect(change.status).toBe(409)
    expect(change.body.error).toBe('currency_in_use')
    expect((await t.request('PATCH', `/v1/spaces/${fresh}/shop`, { token: owner.token, body: { currency: 'XXQ' } })).status).toBe(422)
  })
})

describe('public products', () => {
  test('active products only, in the asked locale, with image transform URLs and in_stock but never the stock count', async () => {
    const fd = new FormData()
    fd.append('file', new Blob([pngOf(photo(16, 16)) as BlobPart], { type: 'image/png' }), 'p.png')
    const asset = (await t.request('POST', `/v1/spaces/${space}/assets`, { token: owner.token, raw: fd })).body.data
    await product({ slug: 'lamp', name: { en: 'Lamp', de: 'Lampe' }, description: { en: 'Bright' }, price: 4200, stock: 3, images: [asset.uuid] })
    await product({ slug: 'hidden', active: false })
    await product({ slug: 'gone', stock: 0 })
    const list = await cdn('GET', '/products?per_page=100', undefined, { headers: { 'Accept-Language': 'de' } })
    expect(list.status).toBe(200)
    const slugs = list.body.data.map((p: any) => p.slug)
    expect(slugs).toContain('lamp')
    expect(slugs).not.toContain('hidden')
    const lamp = list.body.data.find((p: any) => p.slug === 'lamp')
    expect(lamp).toMatchObject({ name: 'Lampe', lang: 'de', description: 'Bright', price: 4200, currency: 'EUR', in_stock: true })
    expect(lamp.stock).toBeUndefined()
    expect(lamp.images[0].url).toEndWith(`/v1/cdn/${space}/assets/${asset.uuid}`)
    expect(lamp.images[0].transform_url).toBe(`${lamp.images[0].url}.webp`)
    expect(list.body.data.find((p: any) => p.slug === 'gone').in_stock).toBe(false)

    const one = await cdn('GET', '/products/lamp?lang=en')
    expect(one.status).toBe(200)
    expect(one.body.data.name).toBe('Lamp')
    expect(one.headers.get('cache-control')).toStartWith('public, max-age=')
    expect(one.headers.get('vary')).toBe('Accept-Language')
    const etag = one.headers.get('etag')!
    expect(etag).toMatch(/^"/)
    const again = await cdn('GET', '/products/lamp?lang=en', undefined, { headers: { 'If-None-Match': etag } })
    expect(again.status).toBe(304)
    expect((await cdn('GET', '/products/hidden')).status).toBe(404)
    expect((await cdn('GET', '/products/nope')).status).toBe(404)
    expect((await cdn('GET', '/products/lamp', undefined, { space: 'no-such-space' })).status).toBe(404)
    expect((await cdn('GET', '/products?per_page=101')).status).toBe(422)
    expect((await cdn('GET', '/products?q=lam')).body.data.map((p: any) => p.slug)).toEqual(['lamp'])
  })

  test('GraphQL products and product(slug) come from the commerce module', async () => {
    const r = await t.request('POST', '/v1/graphql', {
      body: { query: `{ products(space: "${space}", q: "lamp", lang: "de") { total items { slug name price inStock images { transformUrl } } } product(space: "${space}", slug: "lamp") { name currency } }` },
    })
    expect(r.status).toBe(200)
    expect(r.body.errors).toBeUndefined()
    expect(r.body.data.products.total).toBe(1)
    expect(r.body.data.products.items[0]).toMatchObject({ slug: 'lamp', name: 'Lampe', price: 4200, inStock: true })
    expect(r.body.data.product).toEqual({ name: 'Lamp', currency: 'EUR' })
  })

  test('product and order events are declared with webhook bodies', () => {
    const types = t.kernel.events.publicTypes()
    for (const e of ['product.created', 'product.updated', 'product.deleted', 'order.created', 'order.paid', 'order.fulfilled', 'order.cancelled']) expect(types).toContain(e)
    expect(t.kernel.events.webhookBody('order.paid', { order: { id: 'x', number: '#1001' } })).toEqual({ order: { id: 'x', number: '#1001' } })
  })
})

describe('carts', () => {
  test('create, add, raise quantity, remove; totals from current prices; price_changed', async () => {
    const a = await product({ price: 500 })
    const b = await product({ price: 250 })
    const uuid = await cart()
    const empty = await cdn('GET', `/carts/${uuid}`)
    expect(empty.status).toBe(200)
    expect(empty.body.data).toMatchObject({ uuid, items: [], currency: 'EUR', subtotal: 0, total: 0, status: 'open' })
    expect(empty.headers.get('cache-control')).toBe('no-store')
    expect((await add(uuid, a.slug, 2)).status).toBe(201)
    const byId = await add(uuid, a.id, 1)
    expect(byId.body.data.items).toHaveLength(1)
    expect(byId.body.data.items[0].quantity).toBe(3)
    const both = await add(uuid, b.slug, 1)
    expect(both.body.data).toMatchObject({ subtotal: 1750, total: 1750, price_changed: false })
    await api('PATCH', `/products/${a.id}`, { price: 600 })
    const changed = (await cdn('GET', `/carts/${uuid}`)).body.data
    expect(changed.total).toBe(2050)
    expect(changed.price_changed).toBe(true)
    expect(changed.items[0]).toMatchObject({ unit_price: 600, price_at_add: 500, price_changed: true, line_total: 1800 })
    const itemId = changed.items[1].id
    expect((await cdn('DELETE', `/carts/${uuid}/items/${itemId}`)).status).toBe(204)
    expect((await cdn('DELETE', `/carts/${uuid}/items/${itemId}`)).status).toBe(404)
    expect((await cdn('GET', `/carts/${uuid}`)).body.data.items).toHaveLength(1)
  })

  test('unknown, foreign-Space and malformed carts are one 404', async () => {
    const foreign = await cart(other)
    for (const path of [`/carts/${crypto.randomUUID()}`, `/carts/${foreign}`]) {
      const r = await cdn('GET', path)
      expect(r.status).toBe(404)
      expect(r.body.message).toBe('Cart not found.')
    }
    expect((await cdn('GET', '/carts/nope')).status).toBe(404)
    expect((await add(foreign, 'x')).status).toBe(404)
  })

  test('bad items: unknown or inactive product 422, quantity outside 1–99 422, more than the stock 409 with what is left', async () => {
    const uuid = await cart()
    const limited = await product({ stock: 2 })
    const inactive = await product({ active: false })
    expect((await add(uuid, 'no-such-product')).status).toBe(422)
    expect((await add(uuid, inactive.slug)).status).toBe(422)
    expect((await add(uuid, (await product({}, other)).slug)).status).toBe(422)
    for (const quantity of [0, 100, 1.5, '1', -1]) expect((await cdn('POST', `/carts/${uuid}/items`, { product: limited.slug, quantity })).status).toBe(422)
    const over = await add(uuid, limited.slug, 3)
    expect(over.status).toBe(409)
    expect(over.body).toMatchObject({ error: 'insufficient_stock', details: { product: limited.slug, available: 2 } })
  })

  test('a cart holds at most 100 lines: the 101st is 422 cart_full', async () => {
    const uuid = await cart()
    const many: string[] = []
    for (let i = 0; i < 101; i++) many.push((await product({ slug: `line-${i}` })).slug)
    for (let i = 0; i < 100; i++) expect((await add(uuid, many[i]!)).status).toBe(201)
    const r = await add(uuid, many[100]!)
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('cart_full')
    expect((await add(uuid, many[0]!)).status).toBe(201) // raising a line is not a new line
  }, 180_000)
})

describe('checkout', () => {
  test('the order: lines, totals, sequential numbers, stock taken, cart closed, confirmation mail', async () => {
    const p = await product({ price: 1999, stock: 4, name: { en: 'Teapot' } })
    const uuid = await cart()
    await add(uuid, p.slug, 3)
    const r = await cdn('POST', `/carts/${uuid}/checkout`, { ...buyer, note: 'Ring twice' })
    expect(r.status).toBe(201)
    const o = r.body.data
    expect(o).toMatchObject({
      status: 'pending',
      email: 'buyer@example.com',
      name: 'Ada Buyer',
      currency: 'EUR',
      subtotal: 5997,
      total: 5997,
      note: 'Ring twice',
      payment_provider: null,
      payment_url: null,
      address: { country: 'DE', city: 'Berlin' },
    })
    expect(o.number).toMatch(/^#\d+$/)
    expect(o.items).toEqual([{ product_id: p.id, slug: p.slug, name: 'Teapot', unit_price: 1999, quantity: 3, line_total: 5997 }])
    expect(await stockOf(p.id)).toBe(1)
    const closed = await add(uuid, p.slug)
    expect(closed.status).toBe(409)
    expect(closed.body.error).toBe('cart_closed')
    expect((await cdn('POST', `/carts/${uuid}/checkout`, buyer)).body.error).toBe('cart_closed')
    // The next order has the next number.
    const next = await cart()
    await add(next, p.slug, 1)
    const o2 = (await cdn('POST', `/carts/${next}/checkout`, buyer)).body.data
    expect(Number(o2.number.slice(1))).toBe(Number(o.number.slice(1)) + 1)
    await t.kernel.jobs.runDueJobs()
    const mails = await sink.waitFor(1)
    const mail = mails.find((m) => m.parsed.subject?.includes(o.number))!
    expect(mail.to).toEqual(['buyer@example.com'])
    expect(mail.parsed.text).toContain('3 × Teapot')
    expect(mail.parsed.text).toContain('€59.97')
  })

  test('bad checkouts: empty cart 422, bad e-mail, country, note over 1000, unknown fields', async () => {
    const uuid = await cart()
    const empty = await cdn('POST', `/carts/${uuid}/checkout`, buyer)
    expect(empty.status).toBe(422)
    await add(uuid, (await product()).slug)
    const bad = async (body: Record<string, unknown>, field: string) => {
      const r = await cdn('POST', `/carts/${uuid}/checkout`, body)
      expect(r.status).toBe(422)
      expect(Object.keys(r.body.errors ?? {}).some((k) => k.includes(field))).toBe(true)
    }
    await bad({ ...buyer, email: 'not-mail' }, 'email')
    await bad({ ...buyer, address: { ...buyer.address, country: 'XX' } }, 'country')
    await bad({ ...buyer, address: { ...buyer.address, country: 'de' } }, 'country')
    await bad({ ...buyer, note: 'x'.repeat(1001) }, 'note')
    await bad({ ...buyer, total: 1 }, 'total')
    await bad({ ...buyer, name: '' }, 'name')
    expect((await cdn('POST', `/carts/${uuid}/checkout`, buyer, { headers: { 'Idempotency-Key': 'x'.repeat(300) } })).status).toBe(422)
    // Nothing was taken: the cart is still open.
    expect((await cdn('POST', `/carts/${uuid}/checkout`, buyer)).status).toBe(201)
  })

  test('the same Idempotency-Key answers the same order; another key on a closed cart is cart_closed', async () => {
    const p = await product({ stock: 10 })
    const uuid = await cart()
    await add(uuid, p.slug, 2)
    const key = crypto.randomUUID()
    const [a, b] = await Promise.all([
      cdn('POST', `/carts/${uuid}/checkout`, buyer, { headers: { 'Idempotency-Key': key } }),
      cdn('POST', `/carts/${uuid}/checkout`, buyer, { headers: { 'Idempotency-Key': key } }),
    ])
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    expect(b.body.data.id).toBe(a.body.data.id)
    const c = await cdn('POST', `/carts/${uuid}/checkout`, buyer, { headers: { 'Idempotency-Key': key } })
    expect(c.body.data.id).toBe(a.body.data.id)
    expect(await stockOf(p.id)).toBe(8)
    const d = await cdn('POST', `/carts/${uuid}/checkout`, buyer, { headers: { 'Idempotency-Key': 'another' } })
    expect(d.status).toBe(409)
    expect(d.body.error).toBe('cart_closed')
  })

  test('a storefront on another origin may send Idempotency-Key (CORS preflight)', async () => {
    const r = await t.request('OPTIONS', `/v1/cdn/${space}/carts/${crypto.randomUUID()}/checkout`, {
      headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,idempotency-key' },
    })
    expect(r.status).toBeLessThan(300)
    expect((r.headers.get('access-control-allow-headers') ?? '').toLowerCase()).toContain('idempotency-key')
  })

  test('50 parallel checkouts of the last 10 items (from 50 client addresses) sell exactly 10; 40 get insufficient_stock', async () => {
    const p = await product({ stock: 10 })
    const carts: string[] = []
    for (let i = 0; i < 50; i++) {
      const uuid = await cart()
      expect((await add(uuid, p.slug, 1)).status).toBe(201)
      carts.push(uuid)
    }
    const results = await Promise.all(carts.map((uuid, i) => cdn('POST', `/carts/${uuid}/checkout`, buyer, { ip: `198.51.100.${i + 1}` })))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 201)).toHaveLength(10)
    expect(statuses.filter((s) => s === 409)).toHaveLength(40)
    for (const r of results) if (r.status === 409) expect(r.body.error).toBe('insufficient_stock')
    expect(await stockOf(p.id)).toBe(0)
    const [sold] = await t.kernel.db.query<{ n: number }>(
      'select coalesce(sum(quantity), 0)::int as n from order_items i join products p on p.id = i.product_id where p.uuid = $1',
      [p.id],
    )
    expect(sold!.n).toBe(10)
  })

  test('checkouts arriving together each get their own answer: one bad checkout fails no other', async () => {
    const scarce = await product({ stock: 3 })
    const plenty = await product({ stock: null })
    const gone = await product({ stock: 5 })
    const good: string[] = []
    for (let i = 0; i < 5; i++) {
      const uuid = await cart()
      await add(uuid, scarce.slug)
      good.push(uuid)
    }
    const empty = await cart()
    const closed = await cart()
    await add(closed, plenty.slug)
    expect((await cdn('POST', `/carts/${closed}/checkout`, buyer)).status).toBe(201)
    const twice = await cart()
    await add(twice, plenty.slug, 2)
    const inactive = await cart()
    await add(inactive, gone.slug)
    expect((await api('PATCH', `/products/${gone.id}`, { active: false })).status).toBe(200)
    const key = crypto.randomUUID()
    const [goods, others] = await Promise.all([
      Promise.all(good.map((uuid) => cdn('POST', `/carts/${uuid}/checkout`, buyer))),
      Promise.all([
        cdn('POST', `/carts/${empty}/checkout`, buyer),
        cdn('POST', `/carts/${closed}/checkout`, buyer),
        cdn('POST', `/carts/${crypto.randomUUID()}/checkout`, buyer),
        cdn('POST', `/carts/${twice}/checkout`, buyer, { headers: { 'Idempotency-Key': key } }),
        cdn('POST', `/carts/${twice}/checkout`, buyer, { headers: { 'Idempotency-Key': key } }),
        cdn('POST', `/carts/${inactive}/checkout`, buyer),
        cdn('POST', `/carts/${good[0]}/checkout`, buyer, { space: other }),
      ]),
    ])
    expect(goods.filter((r) => r.status === 201)).toHaveLength(3)
    const soldOut = goods.filter((r) => r.status === 409)
    expect(soldOut).toHaveLength(2)
    for (const r of soldOut) expect(r.body).toMatchObject({ error: 'insufficient_stock', details: { product: scarce.slug, available: 0 } })
    const [e, c, u, t1, t2, ina, foreign] = others
    expect(e!.status).toBe(422)
    expect(c!.body.error).toBe('cart_closed')
    expect(u!.status).toBe(404)
    expect(t1!.status).toBe(201)
    expect(t2!.status).toBe(201)
    expect(t2!.body.data.id).toBe(t1!.body.data.id)
    expect(t1!.body.data.items).toEqual([expect.objectContaining({ slug: plenty.slug, quantity: 2 })])
    expect(ina!.status).toBe(422)
    expect(foreign!.status).toBe(404)
    expect(await stockOf(scarce.id)).toBe(0)
    // The numbers of the orders written together are distinct.
    const numbers = [...goods.filter((r) => r.status === 201), t1!].map((r) => r.body.data.number)
    expect(new Set(numbers).size).toBe(numbers.length)
  })

  test('group commit: checkouts submitted together are written in one transaction, stock in arrival order', async () => {
    const p = await product({ stock: 7 })
    const uuids: string[] = []
    for (let i = 0; i < 10; i++) {
      const uuid = await cart()
      await add(uuid, p.slug)
      uuids.push(uuid)
    }
    const { checkouts: batcher, publicSpaces } = t.state(commerceModule)
    const publicSpace = (await publicSpaces.get(space))!
    const before = { ...batcher.stats }
    // Submitted in one tick: they form one batch (kernel/group-commit.ts starts a batch in a microtask, not a timer).
    const settled = await Promise.allSettled(
      uuids.map((cartUuid) =>
        batcher.submit({ space: publicSpace, cartUuid, email: 'b@example.com', name: 'B', address: null, note: null, successUrl: null, cancelUrl: null, idempotencyKey: null }),
      ),
    )
    expect(batcher.stats.batches - before.batches).toBe(1)
    expect(batcher.stats.checkouts - before.checkouts).toBe(10)
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(7)
    // Arrival order: the first seven get the stock.
    expect(settled.slice(0, 7).every((s) => s.status === 'fulfilled')).toBe(true)
    expect(await stockOf(p.id)).toBe(0)
  })

  test('two instances (processes) checking out the same two products in opposite order never deadlock', async () => {
    const a = await product({ stock: 1000 })
    const b = await product({ stock: 1000 })
    const second = await t.instance()
    try {
      for (let round = 0; round < 30; round++) {
        const [c1, c2] = await Promise.all([cart(), cart()])
        await add(c1, a.slug)
        await add(c1, b.slug)
        await add(c2, b.slug)
        await add(c2, a.slug)
        const there = second.runtime
          .handle(
            new Request(`http://localhost/v1/cdn/${space}/carts/${c2}/checkout`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': `203.0.113.${(round % 200) + 1}` },
              body: JSON.stringify(buyer),
            }),
          )
          .then(async (res) => ({ status: res.status, text: await res.text() }))
        const [r1, r2] = await Promise.all([cdn('POST', `/carts/${c1}/checkout`, buyer), there])
        if (r1.status !== 201 || r2.status !== 201) throw new Error(`round ${round}: ${r1.status} ${r1.text} / ${r2.status} ${r2.text}`)
      }
    } finally {
      await second.close()
    }
    expect(await stockOf(a.id)).toBe(940)
    expect(await stockOf(b.id)).toBe(940)
  }, 300_000)

  test('two carts with the same two products added in opposite order check out together 100 times without a deadlock', async () => {
    const a = await product({ stock: 1000 })
    const b = await product({ stock: 1000 })
    for (let round = 0; round < 100; round++) {
      const [c1, c2] = await Promise.all([cart(), cart()])
      await add(c1, a.slug)
      await add(c1, b.slug)
      await add(c2, b.slug)
      await add(c2, a.slug)
      const [r1, r2] = await Promise.all([cdn('POST', `/carts/${c1}/checkout`, buyer), cdn('POST', `/carts/${c2}/checkout`, buyer)])
      if (r1.status !== 201 || r2.status !== 201) throw new Error(`round ${round}: ${r1.status} ${r1.text} / ${r2.status} ${r2.text}`)
    }
    expect(await stockOf(a.id)).toBe(800)
    expect(await stockOf(b.id)).toBe(800)
  }, 300_000)

  test('orders of one Space number from #1001 without gaps', async () => {
    const fresh = (await t.createSpace(owner.token)).slug
    const p = await product({ currency: 'EUR', stock: null }, fresh)
    const numbers: string[] = []
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const uuid = await cart(fresh)
        await cdn('POST', `/carts/${uuid}/items`, { product: p.slug, quantity: 1 }, { space: fresh })
        const r = await cdn('POST', `/carts/${uuid}/checkout`, buyer, { space: fresh })
        numbers.push(r.body.data.number)
      }),
    )
    expect(numbers.sort()).toEqual(['#1001', '#1002', '#1003', '#1004', '#1005', '#1006', '#1007', '#1008'])
  })
})

describe('orders', () => {
  async function order(stock = 5, quantity = 2) {
    const p = await product({ stock })
    const uuid = await cart()
    await add(uuid, p.slug, quantity)
    const r = await cdn('POST', `/carts/${uuid}/checkout`, buyer)
    expect(r.status).toBe(201)
    return { product: p, order: r.body.data }
  }

  test('pending → paid → fulfilled; anything else is invalid_transition', async () => {
    const { order: o } = await order()
    // Orders carry the buyer's name, e-mail and address: moving one (which answers it) needs an admin.
    expect((await api('PATCH', `/orders/${o.id}`, { status: 'paid' }, editor)).status).toBe(403)
    const paid = await api('PATCH', `/orders/${o.id}`, { status: 'paid' })
    expect(paid.status).toBe(200)
    expect(paid.body.data.status).toBe('paid')
    expect(paid.body.data.paid_at).not.toBeNull()
    const again = await api('PATCH', `/orders/${o.id}`, { status: 'paid' })
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ error: 'invalid_transition', details: { from: 'paid', to: 'paid' } })
    expect((await api('PATCH', `/orders/${o.id}`, { status: 'fulfilled' })).body.data.status).toBe('fulfilled')
    for (const status of ['paid', 'cancelled', 'fulfilled']) expect((await api('PATCH', `/orders/${o.id}`, { status })).body.error).toBe('invalid_transition')
    expect((await api('PATCH', `/orders/${o.id}`, { status: 'pending' })).status).toBe(422)
    expect((await api('PATCH', `/orders/${o.id}`, { status: 'paid' }, viewer)).status).toBe(403)
  })

  test('cancelling a pending or paid order returns its stock once', async () => {
    const { product: p, order: o } = await order(5, 2)
    expect(await stockOf(p.id)).toBe(3)
    const c = await api('PATCH', `/orders/${o.id}`, { status: 'cancelled' })
    expect(c.body.data).toMatchObject({ status: 'cancelled', cancel_reason: 'cancelled by the shop' })
    expect(await stockOf(p.id)).toBe(5)
    expect((await api('PATCH', `/orders/${o.id}`, { status: 'cancelled' })).status).toBe(409)
    expect(await stockOf(p.id)).toBe(5)
    const second = await order(5, 1)
    await api('PATCH', `/orders/${second.order.id}`, { status: 'paid' })
    await api('PATCH', `/orders/${second.order.id}`, { status: 'cancelled' })
    expect(await stockOf(second.product.id)).toBe(5)
  })

  test('list with status and q (e-mail or number), paging, one order, foreign Spaces 404', async () => {
    const { order: o } = await order()
    const byNumber = await api('GET', `/orders?q=${encodeURIComponent(o.number)}`)
    expect(byNumber.body.data.map((x: any) => x.id)).toEqual([o.id])
    for (const token of [viewer, editor]) {
      expect((await api('GET', `/orders?q=${encodeURIComponent(o.number)}`, undefined, token)).status).toBe(403)
      expect((await api('GET', `/orders/${o.id}`, undefined, token)).status).toBe(403)
    }
    expect((await api('GET', `/orders?q=${o.number.slice(1)}`)).body.data[0].id).toBe(o.id)
    const pending = await api('GET', '/orders?status=pending&per_page=2')
    expect(pending.body.data).toHaveLength(2)
    expect(pending.body.meta.per_page).toBe(2)
    expect(pending.body.meta.total).toBeGreaterThan(2)
    expect(pending.body.data.every((x: any) => x.status === 'pending')).toBe(true)
    expect((await api('GET', '/orders?q=buyer@example')).body.meta.total).toBeGreaterThan(0)
    expect((await api('GET', '/orders?status=shipped')).status).toBe(422)
    expect((await api('GET', '/orders?per_page=0')).status).toBe(422)
    expect((await api('GET', `/orders/${o.id}`)).body.data.number).toBe(o.number)
    expect((await t.request('GET', `/v1/spaces/${other}/orders/${o.id}`, { token: owner.token })).status).toBe(404)
    const stranger = await t.register()
    expect((await t.request('GET', `/v1/spaces/${space}/orders`, { token: stranger.token })).status).toBe(404)
  })
})

// Last: it moves the shared clock 31 days forward.
describe('idle carts', () => {
  test('a cart idle for 30 days is gone (404 at once, deleted by the daily job); a touched one stays; manual-payment orders wait', async () => {
    // The daily schedule takes its next tick from the clock now, before the clock moves (else, run alone, the first
    // sync would happen 32 days later and its next tick would still be ahead).
    await t.kernel.jobs.runDueJobs()
    const p = await product({ stock: 3 })
    const manual = await cart()
    await add(manual, p.slug, 2)
    const pending = (await cdn('POST', `/carts/${manual}/checkout`, buyer)).body.data
    const idle = await cart()
    const busy = await cart()
    t.clock.advance(20 * 86_400_000)
    expect((await add(busy, p.slug)).status).toBe(201)
    t.clock.advance(11 * 86_400_000)
    expect((await cdn('GET', `/carts/${idle}`)).status).toBe(404)
    expect((await cdn('GET', `/carts/${busy}`)).status).toBe(200)
    const count = async (uuid: string) => (await t.kernel.db.query<{ n: number }>('select count(*)::int as n from carts where uuid = $1', [uuid]))[0]!.n
    expect(await count(idle)).toBe(1)
    t.clock.advance(86_400_000)
    await t.kernel.jobs.runDueJobs()
    expect(await count(idle)).toBe(0)
    expect(await count(busy)).toBe(1)
    // Without a payment provider an order waits for manual payment: the job releasing unpaid Stripe orders leaves it.
    // (Read from the database: the owner's token expired with the 31 days.)
    const [o] = await t.kernel.db.query<{ status: string }>('select status from orders where uuid = $1', [pending.id])
    expect(o!.status).toBe('pending')
    const [s] = await t.kernel.db.query<{ stock: number }>('select stock from products where uuid = $1', [p.id])
    expect(s!.stock).toBe(1)
  })
})
