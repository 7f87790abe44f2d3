import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { type TestApp, testApp } from './helpers/app'
import { type ReceivedRequest, type Receiver, startReceiver } from './helpers/receiver'
import { pluginsModule } from '../src/modules/plugins'

setDefaultTimeout(60_000)

let t: TestApp
const receivers: Receiver[] = []

beforeAll(async () => {
  // Receivers listen on 127.0.0.1, so this app allows private targets (the refusal is tested on a second app).
  t = await testApp({ outboundAllowPrivate: true, webhookTimeoutMs: 2000 })
})

afterAll(async () => {
  for (const r of receivers) await r.stop()
  await t?.close()
})

function receiver(...args: Parameters<typeof startReceiver>) {
  const r = startReceiver(...args)
  receivers.push(r)
  return r
}

const allow = () => Response.json({ allow: true })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

let uid = 0
const doc = (...blocks: Record<string, unknown>[]) => ({ type: 'doc', blocks })
const hero = (headline: unknown) => ({ component: 'hero', _uid: `b${++uid}`, headline })

/** A user with one Space (admin) holding a `hero` blueprint, and an editor token. */
async function owner() {
  const user = await t.register()
  const space = await t.createSpace(user.token)
  const editor = (await t.spaceToken(user.token, space.slug, 'editor')).token
  const c = await t.request('POST', `/v1/spaces/${space.slug}/components`, {
    token: user.token,
    body: { name: 'hero', schema: { headline: { type: 'text', required: true, max_length: 40 } } },
  })
  expect(c.status).toBe(201)
  return { token: user.token, userId: user.user.id, tenantId: user.tenant.id, slug: space.slug, editor }
}
type Owner = Awaited<ReturnType<typeof owner>>

async function addPlugin(o: Owner, body: Record<string, unknown>) {
  const r = await t.request('POST', `/v1/spaces/${o.slug}/plugins`, { token: o.token, body: { name: 'Checker', hooks: ['story.before_save'], ...body } })
  if (r.status !== 201) throw new Error(`create plugin: ${r.status} ${r.text}`)
  return r.body.data as { id: number; secret: string; name: string; active: boolean; order: number; [k: string]: any }
}

async function createStory(o: Owner, body: Record<string, unknown> = {}) {
  return t.request('POST', `/v1/spaces/${o.slug}/stories`, {
    token: o.editor,
    body: { name: 'Home', slug: `s-${++uid}`, content: doc(hero('Hello')), ...body },
  })
}
const save = (o: Owner, uuid: string, body: Record<string, unknown>) => t.request('PUT', `/v1/spaces/${o.slug}/stories/${uuid}`, { token: o.editor, body })
const log = async (o: Owner, id: number, query = '') => (await t.request('GET', `/v1/spaces/${o.slug}/plugins/${id}/log${query}`, { token: o.token })).body.data as any[]

/** The signature checked with node:crypto, independently of the service's own helper. */
function signatureValid(req: ReceivedRequest, secret: string): boolean {
  const ts = req.headers['x-service-timestamp']
  const expected = `sha256=${createHmac('sha256', secret).update(`${ts}.`).update(req.raw).digest('hex')}`
  const given = req.headers['x-service-signature'] ?? ''
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected))
}

describe('managing plugins', () => {
  test('admins add, list, read, change and remove plugins; the secret is shown once; editors are refused', async () => {
    const o = await owner()
    const hook = receiver(allow)
    const created = await addPlugin(o, { url: hook.url, hooks: ['story.before_save', 'story.before_publish'] })
    expect(created.secret).toStartWith('plsec_')
    expect(created).toMatchObject({ name: 'Checker', timeout_ms: 2000, failure_mode: 'open', active: true, order: 1, consecutive_failures: 0 })
    const list = await t.request('GET', `/v1/spaces/${o.slug}/plugins`, { token: o.token })
    expect(list.status).toBe(200)
    expect(list.body.data).toHaveLength(1)
    expect(list.body.data[0].secret).toBeUndefined()
    const one = await t.request('GET', `/v1/spaces/${o.slug}/plugins/${created.id}`, { token: o.token })
    expect(one.body.data.secret).toBeUndefined()
    expect(one.body.data.hooks).toEqual(['story.before_save', 'story.before_publish'])
    const patched = await t.request('PATCH', `/v1/spaces/${o.slug}/plugins/${created.id}`, {
      token: o.token,
      body: { timeout_ms: 500, failure_mode: 'closed', order: 7 },
    })
    expect(patched.status).toBe(200)
    expect(patched.body.data).toMatchObject({ timeout_ms: 500, failure_mode: 'closed', order: 7 })

    expect((await t.request('GET', `/v1/spaces/${o.slug}/plugins`, { token: o.editor })).status).toBe(403)
    expect((await t.request('POST', `/v1/spaces/${o.slug}/plugins`, { token: o.editor, body: { name: 'x', url: hook.url, hooks: ['story.before_save'] } })).status).toBe(403)

    const del = await t.request('DELETE', `/v1/spaces/${o.slug}/plugins/${created.id}`, { token: o.token })
    expect(del.status).toBe(204)
    expect((await t.request('GET', `/v1/spaces/${o.slug}/plugins/${created.id}`, { token: o.token })).status).toBe(404)
  })

  test('bad bodies are 422 naming the field: unknown hooks, timeouts outside 100–5000, unknown failure modes', async () => {
    const o = await owner()
    const base = { name: 'p', url: 'http://127.0.0.1:9/', hooks: ['story.before_save'] }
    const cases: [Record<string, unknown>, string][] = [
      [{ hooks: ['story.after_save'] }, 'hooks/0'],
      [{ hooks: [] }, 'hooks'],
      [{ timeout_ms: 99 }, 'timeout_ms'],
      [{ timeout_ms: 5001 }, 'timeout_ms'],
      [{ failure_mode: 'sometimes' }, 'failure_mode'],
      [{ url: 'ftp://example.com/' }, 'url'],
    ]
    for (const [patch, field] of cases) {
      const r = await t.request('POST', `/v1/spaces/${o.slug}/plugins`, { token: o.token, body: { ...base, ...patch } })
      expect(r.status).toBe(422)
      expect(Object.keys(r.body.errors)).toContain(field)
    }
  })

  test("another Space's plugin reads as 404, and its plugins are never called for this Space's changes", async () => {
    const a = await owner()
    const b = await owner()
    const hook = receiver(allow)
    const p = await addPlugin(a, { url: hook.url })
    expect((await t.request('GET', `/v1/spaces/${b.slug}/plugins/${p.id}`, { token: b.token })).status).toBe(404)
    expect((await t.request('GET', `/v1/spaces/${a.slug}/plugins/${p.id}`, { token: b.token })).status).toBe(404)
    expect((await createStory(b)).status).toBe(201)
    expect(hook.requests).toHaveLength(0)
    expect((await createStory(a)).status).toBe(201)
    expect(hook.requests).toHaveLength(1)
    expect(hook.requests[0].json.space).toEqual({ slug: a.slug })
  })

  test('private addresses are refused unless the operator allows them (the outbound guard)', async () => {
    const strict = await testApp({ outboundAllowPrivate: false })
    try {
      const user = await strict.register()
      const space = await strict.createSpace(user.token)
      const r = await strict.request('POST', `/v1/spaces/${space.slug}/plugins`, {
        token: user.token,
        body: { name: 'p', url: 'http://127.0.0.1:9/hook', hooks: ['story.before_save'] },
      })
      expect(r.status).toBe(422)
      expect(r.body.errors.url[0]).toContain('internal address')
    } finally {
      await strict.close()
    }
  })
})

describe('calls', () => {
  test("a Space without plugins pays no query per change: its (empty) plugin list is cached until a plugin changes", async () => {
    const o = await owner()
    const cache = t.state(pluginsModule).cache.cache
    const load = cache.options.load
    let loads = 0
    cache.options.load = (spaceId) => {
      loads++
      return load(spaceId)
    }
    try {
      for (let i = 0; i < 3; i++) expect((await createStory(o)).status).toBe(201)
      expect(loads).toBe(1)
      const hook = receiver(allow)
      await addPlugin(o, { url: hook.url })
      expect((await createStory(o)).status).toBe(201)
      expect((await createStory(o)).status).toBe(201)
      expect(loads).toBe(2)
      expect(hook.requests).toHaveLength(2)
    } finally {
      cache.options.load = load
    }
  })

  test('an allowing plugin lets the save through; the request is signed like a webhook and carries hook, space, actor and data', async () => {
    const o = await owner()
    const hook = receiver(allow)
    const p = await addPlugin(o, { url: hook.url })
    const r = await createStory(o, { name: 'Signed' })
    expect(r.status).toBe(201)
    const [req] = hook.requests
    expect(req.method).toBe('POST')
    expect(req.headers['content-type']).toBe('application/json')
    expect(req.headers['x-service-event']).toBe('story.before_save')
    expect(req.headers['x-service-delivery']).toMatch(/^[0-9a-f-]{36}$/)
    expect(signatureValid(req, p.secret)).toBe(true)
    expect(signatureValid(req, 'plsec_wrong')).toBe(false)
    expect(req.json).toMatchObject({
      hook: 'story.before_save',
      space: { slug: o.slug },
      actor: { type: 'token' },
      data: { operation: 'create', story: { uuid: null }, changes: { name: 'Signed' } },
    })
    // A user token acts as that user.
    await t.request('POST', `/v1/spaces/${o.slug}/stories`, { token: o.token, body: { name: 'U', slug: `u-${++uid}` } })
    expect(hook.requests[1].json.actor).toEqual({ type: 'user', user_id: o.userId })
  })

  test('a veto answers 422 plugin_veto with the plugin, its message and field errors; nothing is saved', async () => {
    const o = await owner()
    const story = (await createStory(o)).body.data
    const hook = receiver(() => Response.json({ allow: false, message: 'Headlines must not shout.', errors: { 'content/blocks/0/headline': ['is in capitals'] } }))
    const p = await addPlugin(o, { url: hook.url, name: 'Style guide' })
    const r = await save(o, story.uuid, { content: doc(hero('HELLO')) })
    expect(r.status).toBe(422)
    expect(r.body).toMatchObject({
      error: 'plugin_veto',
      message: 'Headlines must not shout.',
      errors: { 'content/blocks/0/headline': ['is in capitals'] },
      details: { plugin: { id: p.id, name: 'Style guide' } },
    })
    const after = await t.request('GET', `/v1/spaces/${o.slug}/stories/${story.uuid}`, { token: o.editor })
    expect(after.body.data.version_no).toBe(1)
    expect(after.body.data.content.blocks[0].headline).toBe('Hello')
    const [entry] = await log(o, p.id)
    expect(entry).toMatchObject({ hook: 'story.before_save', outcome: 'veto', status: 200, message: 'Headlines must not shout.' })
  })

  test('order.before_checkout: a veto refuses the checkout (nothing sold, stock kept); the plugin sees the cart and the buyer, no address of the client', async () => {
    const o = await owner()
    const product = await t.request('POST', `/v1/spaces/${o.slug}/products`, {
      token: o.editor,
      body: { slug: 'mug', name: { en: 'Mug' }, price: 1250, currency: 'EUR', stock: 3 },
    })
    expect(product.status).toBe(201)
    const cart = (await t.request('POST', `/v1/cdn/${o.slug}/carts`)).body.data
    expect((await t.request('POST', `/v1/cdn/${o.slug}/carts/${cart.uuid}/items`, { body: { product: 'mug', quantity: 2 } })).status).toBe(201)
    let allowIt = false
    const hook = receiver(() => (allowIt ? Response.json({ allow: true }) : Response.json({ allow: false, message: 'We do not ship there.', errors: { 'address/country': ['is not served'] } })))
    const p = await addPlugin(o, { url: hook.url, name: 'Shipping', hooks: ['order.before_checkout'] })
    const buyer = { email: 'Buyer@Example.com', name: 'Bea Buyer', address: { line1: 'Main St 1', city: 'Oslo', postal_code: '0150', country: 'NO' } }
    const vetoed = await t.request('POST', `/v1/cdn/${o.slug}/carts/${cart.uuid}/checkout`, { body: buyer, ip: '203.0.113.9' })
    expect(vetoed.status).toBe(422)
    expect(vetoed.body).toMatchObject({ error: 'plugin_veto', message: 'We do not ship there.', errors: { 'address/country': ['is not served'] }, details: { plugin: { id: p.id, name: 'Shipping' } } })
    const call = hook.requests.at(-1)!
    expect(signatureValid(call, p.secret)).toBe(true)
    expect(call.json).toMatchObject({
      hook: 'order.before_checkout',
      data: {
        cart: { uuid: cart.uuid, currency: 'EUR', subtotal: 2500, items: [{ product: { slug: 'mug' }, quantity: 2, unit_price: 1250, line_total: 2500 }] },
        buyer: { email: 'buyer@example.com', name: 'Bea Buyer', address: { country: 'NO' }, note: null },
      },
    })
    expect(new TextDecoder().decode(call.raw)).not.toContain('203.0.113.9')
    // Nothing sold: no order, the stock unchanged, the cart still open.
    expect((await t.request('GET', `/v1/spaces/${o.slug}/orders`, { token: o.token })).body.meta.total).toBe(0)
    expect((await t.request('GET', `/v1/cdn/${o.slug}/carts/${cart.uuid}`)).body.data.status).toBe('open')
    allowIt = true
    const sold = await t.request('POST', `/v1/cdn/${o.slug}/carts/${cart.uuid}/checkout`, { body: buyer })
    expect(sold.status).toBe(201)
    expect((await t.request('GET', `/v1/spaces/${o.slug}/products/${product.body.data.id}`, { token: o.editor })).body.data.stock).toBe(1)
  })

  test('an amendment replaces the save and is validated again: one within the blueprint is saved, one breaking it is 422', async () => {
    const o = await owner()
    const story = (await createStory(o)).body.data
    let headline: unknown = 'Normalised'
    const hook = receiver((req) => {
      const data = req.json.data
      data.changes.content.blocks[0].headline = headline
      return Response.json({ allow: true, data })
    })
    const p = await addPlugin(o, { url: hook.url })
    const ok = await save(o, story.uuid, { content: doc(hero('  normalise me ')) })
    expect(ok.status).toBe(200)
    expect(ok.body.data.content.blocks[0].headline).toBe('Normalised')

    headline = 'x'.repeat(41) // the blueprint's max_length is 40
    const bad = await save(o, story.uuid, { content: doc(hero('fine')) })
    expect(bad.status).toBe(422)
    expect(bad.body.error).toBe('validation_failed')
    expect(Object.keys(bad.body.errors)[0]).toBe('blocks/0/headline')

    headline = 42
    const wrongType = await save(o, story.uuid, { content: doc(hero('fine')) })
    expect(wrongType.status).toBe(422)
    expect((await t.request('GET', `/v1/spaces/${o.slug}/stories/${story.uuid}`, { token: o.editor })).body.data.version_no).toBe(2)
    expect((await log(o, p.id, '?outcome=amend')).length).toBe(3)
  })

  test('an amendment of the body itself is checked like a request body (unknown fields, wrong types: 422)', async () => {
    const o = await owner()
    const story = (await createStory(o)).body.data
    const hook = receiver((req) => Response.json({ allow: true, data: { ...req.json.data, changes: { name: 7, extra: true } } }))
    await addPlugin(o, { url: hook.url })
    const r = await save(o, story.uuid, { name: 'New' })
    expect(r.status).toBe(422)
    expect(Object.keys(r.body.errors).sort()).toEqual(['extra', 'name'])
  })

  test('plugins run in order, each seeing the amendment of the one before', async () => {
    const o = await owner()
    const first = receiver((req) => Response.json({ allow: true, data: { ...req.json.data, changes: { ...req.json.data.changes, name: `${req.json.data.changes.name} +first` } } }))
    const second = receiver((req) => Response.json({ allow: true, data: { ...req.json.data, changes: { ...req.json.data.changes, name: `${req.json.data.changes.name} +second` } } }))
    await addPlugin(o, { url: second.url, order: 20 })
    await addPlugin(o, { url: first.url, order: 10 })
    const r = await createStory(o, { name: 'Story' })
    expect(r.status).toBe(201)
    expect(r.body.data.name).toBe('Story +first +second')
    expect(second.requests[0].json.data.changes.name).toBe('Story +first')
  })

  test('a timeout lets the change through in open mode (logged) and answers 503 plugin_unavailable in closed mode', async () => {
    const o = await owner()
    const hook = receiver(async () => {
      await sleep(1500)
      return allow()
    })
    const p = await addPlugin(o, { url: hook.url, timeout_ms: 200 })
    const open = await createStory(o)
    expect(open.status).toBe(201)
    const [entry] = await log(o, p.id)
    expect(entry.outcome).toBe('error')
    expect(entry.status).toBeNull()
    expect(entry.message).toContain('timeout')

    await t.request('PATCH', `/v1/spaces/${o.slug}/plugins/${p.id}`, { token: o.token, body: { failure_mode: 'closed' } })
    const closed = await createStory(o, { slug: 'closed-mode' })
    expect(closed.status).toBe(503)
    expect(closed.body).toMatchObject({ error: 'plugin_unavailable', details: { plugin: { id: p.id, name: 'Checker' } } })
    const list = await t.request('GET', `/v1/spaces/${o.slug}/stories?q=closed-mode`, { token: o.editor })
    expect(list.body.data).toHaveLength(0)
  })

  test('a non-2xx status or an unparsable answer is a failure like a timeout', async () => {
    const o = await owner()
    let answer = () => new Response('nope', { status: 500 })
    const hook = receiver(() => answer())
    const p = await addPlugin(o, { url: hook.url, failure_mode: 'closed' })
    expect((await createStory(o)).status).toBe(503)
    answer = () => new Response('{"allow": "yes"}', { headers: { 'content-type': 'application/json' } })
    expect((await createStory(o)).status).toBe(503)
    answer = () => new Response('<html>', { status: 200 })
    expect((await createStory(o)).status).toBe(503)
    const entries = await log(o, p.id, '?outcome=error')
    expect(entries.map((e) => e.status)).toEqual([200, 200, 500])
    expect(entries[2].message).toContain('500')
  })

  test('a slow plugin holds up only the change it filters: other requests are answered meanwhile', async () => {
    const o = await owner()
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    const hook = receiver(async () => {
      await released
      return allow()
    })
    await addPlugin(o, { url: hook.url, timeout_ms: 5000 })
    const pending = createStory(o, { name: 'Slow' })
    await hook.waitFor(1)
    // While the plugin holds the save, reads and writes that no plugin filters go through.
    const list = await t.request('GET', `/v1/spaces/${o.slug}/stories`, { token: o.editor })
    expect(list.status).toBe(200)
    const comp = await t.request('POST', `/v1/spaces/${o.slug}/components`, { token: o.token, body: { name: 'note', schema: { text: { type: 'text' } } } })
    expect(comp.status).toBe(201)
    expect(hook.open).toBe(1)
    release()
    expect((await pending).status).toBe(201)
  })

  test('no transaction is open during the call: a concurrent write to the same Story proceeds while the plugin sleeps', async () => {
    const o = await owner()
    const story = (await createStory(o)).body.data
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    const hook = receiver(async (_req, index) => {
      if (index === 0) await released // the first save waits here; the second is answered at once
      return allow()
    })
    await addPlugin(o, { url: hook.url, timeout_ms: 5000 })
    const first = save(o, story.uuid, { name: 'First' })
    await hook.waitFor(1)
    const second = await save(o, story.uuid, { name: 'Second' })
    expect(second.status).toBe(200)
    expect(second.body.data.version_no).toBe(2)
    expect(hook.open).toBe(1) // the first save's plugin call is still in flight
    release()
    const done = await first
    expect(done.status).toBe(200)
    expect(done.body.data).toMatchObject({ name: 'First', version_no: 3 })
  })

  test('rotate-secret: the next call is signed with the new secret, shown once', async () => {
    const o = await owner()
    const hook = receiver(allow)
    const p = await addPlugin(o, { url: hook.url })
    await createStory(o)
    const rotated = await t.request('POST', `/v1/spaces/${o.slug}/plugins/${p.id}/rotate-secret`, { token: o.token })
    expect(rotated.status).toBe(200)
    const secret = rotated.body.data.secret as string
    expect(secret).toStartWith('plsec_')
    expect(secret).not.toBe(p.secret)
    await createStory(o)
    expect(signatureValid(hook.requests[0], p.secret)).toBe(true)
    expect(signatureValid(hook.requests[1], secret)).toBe(true)
    expect(signatureValid(hook.requests[1], p.secret)).toBe(false)
    expect((await t.request('POST', `/v1/spaces/${o.slug}/plugins/${p.id}/rotate-secret`, { token: o.editor })).status).toBe(403)
  })

  test('the log lists calls newest first with hook, time, latency, status, outcome and message; limit and outcome filter it', async () => {
    const o = await owner()
    let n = 0
    const hook = receiver(() => (++n % 2 ? allow() : Response.json({ allow: false, message: `no ${n}` })))
    const p = await addPlugin(o, { url: hook.url })
    for (let i = 0; i < 4; i++) {
      await createStory(o)
      t.clock.advance(1000)
    }
    const all = await log(o, p.id)
    expect(all.map((e) => e.outcome)).toEqual(['veto', 'allow', 'veto', 'allow'])
    expect(all[0]).toMatchObject({ hook: 'story.before_save', status: 200, message: 'no 4' })
    expect(typeof all[0].latency_ms).toBe('number')
    expect(Date.parse(all[0].time)).toBeGreaterThan(Date.parse(all[1].time))
    expect(await log(o, p.id, '?limit=1')).toHaveLength(1)
    expect((await log(o, p.id, '?outcome=allow')).map((e) => e.outcome)).toEqual(['allow', 'allow'])
    const bad = await t.request('GET', `/v1/spaces/${o.slug}/plugins/${p.id}/log?outcome=maybe`, { token: o.token })
    expect(bad.status).toBe(422)
    expect((await t.request('GET', `/v1/spaces/${o.slug}/plugins/${p.id}/log?limit=500`, { token: o.token })).status).toBe(422)
  })

  test('the log is kept 14 days: the daily job prunes older calls', async () => {
    const o = await owner()
    const hook = receiver(allow)
    const p = await addPlugin(o, { url: hook.url })
    await createStory(o)
    t.clock.advance(13 * 86_400_000)
    await t.kernel.jobs.runDueJobs()
    expect(await log(o, p.id)).toHaveLength(1)
    t.clock.advance(2 * 86_400_000)
    await t.kernel.jobs.runDueJobs()
    expect(await log(o, p.id)).toHaveLength(0)
  })

  test('20 failures in a row deactivate the plugin (vetoes are answers and end a run); plugin.deactivated reaches webhooks', async () => {
    const o = await owner()
    const webhook = receiver(() => new Response('ok'))
    const sub = await t.request('POST', `/v1/spaces/${o.slug}/webhooks`, { token: o.token, body: { label: 'ops', url: webhook.url, events: ['plugin.deactivated'] } })
    expect(sub.status).toBe(201)
    let answer: () => Response = () => new Response('down', { status: 502 })
    const hook = receiver(() => answer())
    const p = await addPlugin(o, { url: hook.url })
    for (let i = 0; i < 19; i++) expect((await createStory(o)).status).toBe(201)
    answer = () => Response.json({ allow: false, message: 'no' })
    expect((await createStory(o)).status).toBe(422)
    expect((await t.request('GET', `/v1/spaces/${o.slug}/plugins/${p.id}`, { token: o.token })).body.data.consecutive_failures).toBe(0)
    answer = () => new Response('down', { status: 502 })
    for (let i = 0; i < 20; i++) expect((await createStory(o)).status).toBe(201)
    const after = (await t.request('GET', `/v1/spaces/${o.slug}/plugins/${p.id}`, { token: o.token })).body.data
    expect(after).toMatchObject({ active: false, consecutive_failures: 20 })
    expect(after.deactivated_reason).toContain('20 consecutive failures')
    expect(after.deactivated_reason).toContain('502')
    expect(after.deactivated_at).not.toBeNull()
    // Deactivated: no more calls.
    const calls = hook.requests.length
    expect((await createStory(o)).status).toBe(201)
    expect(hook.requests.length).toBe(calls)
    await t.kernel.jobs.runDueJobs()
    const [delivery] = await webhook.waitFor(1)
    expect(delivery.json).toMatchObject({
      event: 'plugin.deactivated',
      space: { slug: o.slug },
      plugin: { id: p.id, name: 'Checker', url: hook.url },
      consecutive_failures: 20,
    })
    // Switched on again: a fresh run.
    answer = allow
    const on = await t.request('PATCH', `/v1/spaces/${o.slug}/plugins/${p.id}`, { token: o.token, body: { active: true } })
    expect(on.body.data).toMatchObject({ active: true, consecutive_failures: 0, deactivated_reason: null })
    expect((await createStory(o)).status).toBe(201)
    expect(hook.requests.length).toBe(calls + 1)
  })
})

describe('the hooks of stories, assets and forms', () => {
  test('story.before_publish and story.before_delete can veto; the payload holds the Story', async () => {
    const o = await owner()
    const story = (await createStory(o, { name: 'Guarded' })).body.data
    const hook = receiver((req) => Response.json({ allow: false, message: `not now: ${req.json.hook}` }))
    await addPlugin(o, { url: hook.url, hooks: ['story.before_publish', 'story.before_delete'] })
    const pub = await t.request('POST', `/v1/spaces/${o.slug}/stories/${story.uuid}/publish`, { token: o.editor })
    expect(pub.status).toBe(422)
    expect(pub.body.message).toBe('not now: story.before_publish')
    expect(hook.requests[0].json.data.story).toMatchObject({ uuid: story.uuid, name: 'Guarded', content: { type: 'doc' } })
    const del = await t.request('DELETE', `/v1/spaces/${o.slug}/stories/${story.uuid}`, { token: o.editor })
    expect(del.status).toBe(422)
    expect(hook.requests[1].json.data).toMatchObject({ operation: 'delete', story: { uuid: story.uuid, status: 'draft' } })
    const arch = await t.request('POST', `/v1/spaces/${o.slug}/stories/${story.uuid}/archive`, { token: o.editor })
    expect(arch.status).toBe(422)
    expect(hook.requests[2].json.data.operation).toBe('archive')
    const still = await t.request('GET', `/v1/spaces/${o.slug}/stories/${story.uuid}`, { token: o.editor })
    expect(still.body.data.status).toBe('draft')
    // A save is not hooked by this plugin.
    expect((await save(o, story.uuid, { name: 'Saved' })).status).toBe(200)
    expect(hook.requests).toHaveLength(3)
  })

  test('asset.before_upload sees the checked file and can veto it', async () => {
    const o = await owner()
    const hook = receiver((req) => (req.json.data.asset.size > 10 ? Response.json({ allow: false, message: 'too big for us', errors: { file: ['over 10 bytes'] } }) : allow()))
    await addPlugin(o, { url: hook.url, hooks: ['asset.before_upload'] })
    const upload = (text: string) => {
      const fd = new FormData()
      fd.append('file', new Blob([`%PDF-1.4\n${text}`], { type: 'application/pdf' }), 'doc.pdf')
      return t.request('POST', `/v1/spaces/${o.slug}/assets`, { token: o.editor, raw: fd })
    }
    const r = await upload('a long enough body')
    expect(r.status).toBe(422)
    expect(r.body).toMatchObject({ error: 'plugin_veto', errors: { file: ['over 10 bytes'] } })
    expect(hook.requests[0].json.data.asset).toMatchObject({ filename: 'doc.pdf', content_type: 'application/pdf' })
    expect(hook.requests[0].json.data.asset.sha256).toMatch(/^[0-9a-f]{64}$/)
    const list = await t.request('GET', `/v1/spaces/${o.slug}/assets`, { token: o.editor })
    expect(list.body.data).toHaveLength(0)
  })

  test('form.before_submit: no client address in the payload; an amendment is validated again against the form', async () => {
    const o = await owner()
    const form = await t.request('POST', `/v1/spaces/${o.slug}/forms`, {
      token: o.editor,
      body: { slug: 'contact', label: 'Contact', fields: [{ key: 'email', type: 'email', label: 'E-mail', required: true }, { key: 'topic', type: 'text', label: 'Topic' }] },
    })
    expect(form.status).toBe(201)
    let amend: (data: any) => unknown = (data) => ({ ...data, data: { ...data.data, topic: 'sales' } })
    const hook = receiver((req) => Response.json({ allow: true, data: amend(req.json.data) }))
    await addPlugin(o, { url: hook.url, hooks: ['form.before_submit'] })
    const ok = await t.request('POST', `/v1/cdn/${o.slug}/forms/contact`, {
      body: { data: { email: 'ada@example.com' } },
      ip: '203.0.113.9',
      headers: { 'User-Agent': 'probe-agent/1' },
    })
    expect(ok.status).toBe(201)
    const sent = hook.requests[0]
    expect(sent.json).toMatchObject({ hook: 'form.before_submit', actor: { type: 'public' }, data: { form: { slug: 'contact' }, data: { email: 'ada@example.com' } } })
    expect(sent.text).not.toContain('203.0.113.9')
    expect(sent.text).not.toContain('probe-agent')
    const subs = await t.request('GET', `/v1/spaces/${o.slug}/forms/${form.body.data.uuid}/submissions`, { token: o.token })
    expect(subs.body.data[0].data).toEqual({ email: 'ada@example.com', topic: 'sales' })

    amend = (data) => ({ ...data, data: { email: 'not an address' } })
    const bad = await t.request('POST', `/v1/cdn/${o.slug}/forms/contact`, { body: { data: { email: 'bob@example.com' } } })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.errors)).toContain('email')
  })
})

describe('the OpenAPI description', () => {
  test('lists plugin_veto and plugin_unavailable on the operations whose hooks plugins filter, and not elsewhere', async () => {
    const doc = (await t.request('GET', '/v1/openapi.json')).body
    const described = (path: string, method: string, status: number) => String(doc.paths[path][method].responses[status]?.description ?? '')
    for (const [path, method] of [
      ['/v1/spaces/{space}/stories', 'post'],
      ['/v1/spaces/{space}/stories/{uuid}', 'put'],
      ['/v1/spaces/{space}/stories/{uuid}/publish', 'post'],
      ['/v1/spaces/{space}/assets', 'post'],
      ['/v1/cdn/{space}/forms/{slug}', 'post'],
    ]) {
      expect(described(path, method, 422)).toContain('plugin_veto')
      expect(described(path, method, 503)).toContain('plugin_unavailable')
    }
    expect(described('/v1/spaces/{space}/components', 'post', 422)).not.toContain('plugin_veto')
  })
})
