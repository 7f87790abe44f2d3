import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRuntime, type Runtime } from '../src/app'
import { loadConfig } from '../src/config'
import { createKernel, type Kernel } from '../src/kernel/kernel'
import { SecretBox } from '../src/kernel/crypto'
import { transact } from '../src/kernel/events'
import { isInternalAddress } from '../src/kernel/outbound'
import { type TestApp, testApp } from './helpers/app'
import { type ReceivedRequest, type Receiver, startReceiver } from './helpers/receiver'

setDefaultTimeout(30_000)

let t: TestApp
/** Both app instances below share the key that seals webhook secrets, as every instance of a deployment must. */
const SECRET_KEY = '4f'.repeat(32)
const receivers: Receiver[] = []

beforeAll(async () => {
  // Receivers listen on 127.0.0.1, so this app allows private targets; the refusal is tested on a second app below.
  // The timeout is far above a loopback answer on a loaded machine: only the receiver held open below times out.
  t = await testApp({ outboundAllowPrivate: true, webhookTimeoutMs: 3000, secretKey: SECRET_KEY })
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

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/** A user with one Space where they are admin. */
async function owner() {
  const user = await t.register()
  const space = await t.createSpace(user.token)
  const [row] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [space.slug])
  return { token: user.token, slug: space.slug, spaceId: row.id }
}

type Owner = Awaited<ReturnType<typeof owner>>

async function subscribe(o: Owner, body: Record<string, unknown>) {
  const res = await t.request('POST', `/v1/spaces/${o.slug}/webhooks`, {
    token: o.token,
    body: { label: 'Test hook', events: ['story.published'], ...body },
  })
  if (res.status !== 201) throw new Error(`create webhook failed: ${res.status} ${res.text}`)
  return res.body.data as { id: number; secret: string; url: string; events: string[]; active: boolean }
}

const STORY = { id: 41, uuid: '7d5c0a2e-1f0b-4c53-9a55-3c8b8f0f7a11', slug: 'hello', full_path: '/blog/hello', lang: 'en', version_no: 3, status: 'published' }

/** What the stories module does on publish: the event written in the change's own transaction. */
async function emit(spaceId: number, type: 'story.published' | 'story.unpublished' | 'story.deleted' | 'version.created' = 'story.published', story = STORY) {
  await transact(t.kernel, async (_tx, e) => e({ type, spaceId, payload: { story } }))
}

const drain = () => t.kernel.jobs.runDueJobs()

/** Verifies X-Service-Signature with an independent HMAC (node:crypto) over `<timestamp>.<raw body bytes>`. */
function signatureValid(secret: string, req: ReceivedRequest): boolean {
  const header = req.headers['x-service-signature'] ?? ''
  if (!header.startsWith('sha256=')) return false
  const expected = createHmac('sha256', secret)
    .update(`${req.headers['x-service-timestamp']}.`)
    .update(req.raw)
    .digest()
  const given = Buffer.from(header.slice(7), 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

async function log(o: Owner, id: number, query = '') {
  const res = await t.request('GET', `/v1/spaces/${o.slug}/webhooks/${id}/deliveries${query}`, { token: o.token })
  if (res.status !== 200) throw new Error(`deliveries failed: ${res.status} ${res.text}`)
  return res.body.data as any[]
}

describe('subscriptions', () => {
  test('creating answers 201 with the secret once; reads never show it; it is stored sealed', async () => {
    const o = await owner()
    const r = receiver()
    const res = await t.request('POST', `/v1/spaces/${o.slug}/webhooks`, {
      token: o.token,
      body: { label: 'Build hook', url: `${r.url}/in`, events: ['story.published', 'story.unpublished'], active: true },
    })
    expect(res.status).toBe(201)
    const hook = res.body.data
    expect(hook).toMatchObject({ label: 'Build hook', url: `${r.url}/in`, events: ['story.published', 'story.unpublished'], active: true })
    expect(hook.id).toBeNumber()
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)

    const list = await t.request('GET', `/v1/spaces/${o.slug}/webhooks`, { token: o.token })
    expect(list.status).toBe(200)
    expect(list.body.data).toHaveLength(1)
    expect(list.body.data[0]).not.toHaveProperty('secret')
    expect(list.text).not.toContain(hook.secret)
    const one = await t.request('GET', `/v1/spaces/${o.slug}/webhooks/${hook.id}`, { token: o.token })
    expect(one.status).toBe(200)
    expect(one.body.data).toEqual({ ...list.body.data[0] })
    expect(one.text).not.toContain(hook.secret)

    const [row] = await t.kernel.db.query<{ secret_sealed: string }>('select secret_sealed from webhook_subscriptions where id = $1', [hook.id])
    expect(row.secret_sealed).toStartWith('v1.')
    expect(row.secret_sealed).not.toContain(hook.secret.slice(6))
    expect(t.kernel.secrets.open(row.secret_sealed, 'webhook-secret')).toBe(hook.secret)
  })

  test('active defaults to true; PATCH changes label, events and active', async () => {
    const o = await owner()
    const r = receiver()
    const hook = await subscribe(o, { url: r.url })
    expect(hook.active).toBe(true)
    const res = await t.request('PATCH', `/v1/spaces/${o.slug}/webhooks/${hook.id}`, {
      token: o.token,
      body: { label: 'Renamed', events: ['space.archived', 'space.archived'], active: false },
    })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ id: hook.id, label: 'Renamed', events: ['space.archived'], active: false, url: r.url })
    const moved = await t.request('PATCH', `/v1/spaces/${o.slug}/webhooks/${hook.id}`, { token: o.token, body: { url: `${r.url}/v2` } })
    expect(moved.body.data).toMatchObject({ label: 'Renamed', url: `${r.url}/v2`, active: false })
    expect(Date.parse(moved.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(moved.body.data.created_at))
    expect(res.body.data).not.toHaveProperty('secret')
  })

  test('event names outside the spec table, bad URLs and bad bodies answer 422', async () => {
    const o = await owner()
    const r = receiver()
    const post = (body: unknown) => t.request('POST', `/v1/spaces/${o.slug}/webhooks`, { token: o.token, body })
    const unknown = await post({ label: 'x', url: r.url, events: ['story.published', 'story.exploded'] })
    expect(unknown.status).toBe(422)
    expect(unknown.body.error).toBe('validation_failed')
    expect(Object.keys(unknown.body.errors).join()).toContain('events')
    expect((await post({ label: 'x', url: r.url, events: [] })).status).toBe(422)
    expect((await post({ label: 'x', url: r.url })).status).toBe(422)
    expect((await post({ label: '', url: r.url, events: ['story.published'] })).status).toBe(422)
    for (const url of ['ftp://127.0.0.1/x', 'file:///etc/passwd', 'not a url', 'javascript:alert(1)']) {
      const res = await post({ label: 'x', url, events: ['story.published'] })
      expect(res.status).toBe(422)
      expect(res.body.errors.url).toBeDefined()
    }
    const patch = await t.request('PATCH', `/v1/spaces/${o.slug}/webhooks/${(await subscribe(o, { url: r.url })).id}`, {
      token: o.token,
      body: { events: ['nope'] },
    })
    expect(patch.status).toBe(422)
  })

  test('only admins manage webhooks; other tenants get 404; unknown ids get 404', async () => {
    const o = await owner()
    const r = receiver()
    const hook = await subscribe(o, { url: r.url })
    const editor = await t.spaceToken(o.token, o.slug, 'editor')
    const admin = await t.spaceToken(o.token, o.slug, 'admin')
    expect((await t.request('GET', `/v1/spaces/${o.slug}/webhooks`, { token: editor.token })).status).toBe(403)
    expect(
      (await t.request('POST', `/v1/spaces/${o.slug}/webhooks`, { token: editor.token, body: { label: 'x', url: r.url, events: ['story.published'] } }))
        .status,
    ).toBe(403)
    expect((await t.request('GET', `/v1/spaces/${o.slug}/webhooks`, { token: admin.token })).status).toBe(200)
    const stranger = await owner()
    expect((await t.request('GET', `/v1/spaces/${o.slug}/webhooks`, { token: stranger.token })).status).toBe(404)
    expect((await t.request('GET', `/v1/spaces/${stranger.slug}/webhooks/${hook.id}`, { token: stranger.token })).status).toBe(404)
    expect((await t.request('DELETE', `/v1/spaces/${stranger.slug}/webhooks/${hook.id}`, { token: stranger.token })).status).toBe(404)
    for (const id of ['999999', 'abc', '0', '-1', '1.5']) {
      expect((await t.request('GET', `/v1/spaces/${o.slug}/webhooks/${id}`, { token: o.token })).status).toBe(404)
    }
    expect((await t.request('GET', `/v1/spaces/${o.slug}/webhooks`)).status).toBe(401)
  })
})

describe('delivery', () => {
  test('a Story event is POSTed with the headers, the exact envelope and a signature an independent HMAC verifies', async () => {
    const o = await owner()
    const r = receiver()
    const hook = await subscribe(o, { url: `${r.url}/hooks/content?x=1` })
    await emit(o.spaceId)
    await drain()
    expect(r.requests).toHaveLength(1)
    const req = r.requests[0]
    expect(req.method).toBe('POST')
    expect(req.path).toBe('/hooks/content')
    expect(req.headers['content-type']).toBe('application/json')
    expect(req.headers['x-service-event']).toBe('story.published')
    expect(req.headers['x-service-delivery']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const now = t.clock.now()
    expect(req.headers['x-service-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)))
    expect(req.headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/)
    expect(signatureValid(hook.secret, req)).toBe(true)
    expect(signatureValid('whsec_wrong', req)).toBe(false)
    // The body exactly: these keys, in this order, no internal ids.
    expect(req.text).toBe(
      JSON.stringify({
        event: 'story.published',
        delivered_at: now.toISOString(),
        space: { slug: o.slug },
        story: { uuid: STORY.uuid, slug: 'hello', full_path: '/blog/hello', lang: 'en', version_no: 3, status: 'published' },
      }),
    )
    // The log: one delivered attempt with the receiver's status, body and latency.
    const entries = await log(o, hook.id)
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({
      delivery_id: req.headers['x-service-delivery'],
      event: 'story.published',
      response_status: 200,
      response_body: 'ok',
      retry_count: 0,
      outcome: 'delivered',
      next_attempt_at: null,
      delivery_status: 'delivered',
      timestamp: now.toISOString(),
    })
    expect(entries[0].latency_ms).toBeNumber()
    expect(entries[0].latency_ms).toBeGreaterThanOrEqual(0)
    // Nothing more to send.
    await drain()
    expect(r.requests).toHaveLength(1)
  })

  test('a tampered body or a different timestamp does not verify', async () => {
    const o = await owner()
    const r = receiver()
    const hook = await subscribe(o, { url: r.url })
    await emit(o.spaceId)
    await drain()
    const req = r.requests[0]
    const tampered = { ...req, raw: new TextEncoder().encode(req.text.replace('hello', 'hellp')) }
    expect(signatureValid(hook.secret, tampered)).toBe(false)
    const shifted = { ...req, headers: { ...req.headers, 'x-service-timestamp': String(Number(req.headers['x-service-timestamp']) + 1) } }
    expect(signatureValid(hook.secret, shifted)).toBe(false)
  })

  test('the other Story events and version.created carry the same story envelope', async () => {
    const o = await owner()
    const r = receiver()
    await subscribe(o, { url: r.url, events: ['story.unpublished', 'story.deleted', 'version.created'] })
    await emit(o.spaceId, 'story.unpublished', { ...STORY, status: 'draft' })
    await emit(o.spaceId, 'story.deleted', { ...STORY, status: 'deleted' })
    await emit(o.spaceId, 'version.created', { ...STORY, version_no: 4, status: 'draft' })
    await emit(o.spaceId, 'story.published')
    await drain()
    const events = r.requests.map((q) => q.headers['x-service-event']).sort()
    expect(events).toEqual(['story.deleted', 'story.unpublished', 'version.created'])
    for (const q of r.requests) {
      expect(Object.keys(q.json)).toEqual(['event', 'delivered_at', 'space', 'story'])
      expect(q.json.event).toBe(q.headers['x-service-event'])
      expect(Object.keys(q.json.story)).toEqual(['uuid', 'slug', 'full_path', 'lang', 'version_no', 'status'])
    }
    expect(r.requests.find((q) => q.json.event === 'version.created')!.json.story.version_no).toBe(4)
  })

  test('space.archived is delivered with its documented payload', async () => {
    const o = await owner()
    const r = receiver()
    const hook = await subscribe(o, { url: r.url, events: ['space.archived'] })
    const res = await t.request('POST', `/v1/spaces/${o.slug}/archive`, { token: o.token })
    expect(res.status).toBe(200)
    await drain()
    expect(r.requests).toHaveLength(1)
    const body = r.requests[0].json
    expect(Object.keys(body)).toEqual(['event', 'delivered_at', 'space'])
    expect(body.event).toBe('space.archived')
    expect(body.space).toEqual({ slug: o.slug, name: expect.any(String), archived_at: expect.any(String) })
    expect(signatureValid(hook.secret, r.requests[0])).toBe(true)
  })

  test('every matching subscription gets its own delivery; unsubscribed events, other Spaces and inactive subscriptions get nothing', async () => {
    const o = await owner()
    const other = await owner()
    const [a, b, inactive, unsubscribed, foreign] = [receiver(), receiver(), receiver(), receiver(), receiver()]
    await subscribe(o, { url: a.url })
    await subscribe(o, { url: b.url, events: ['story.published', 'story.deleted'] })
    const off = await subscribe(o, { url: inactive.url, active: false })
    await subscribe(o, { url: unsubscribed.url, events: ['story.unpublished'] })
    await subscribe(other, { url: foreign.url })
    await emit(o.spaceId)
    await drain()
    expect(a.requests).toHaveLength(1)
    expect(b.requests).toHaveLength(1)
    expect(a.requests[0].headers['x-service-delivery']).not.toBe(b.requests[0].headers['x-service-delivery'])
    expect(inactive.requests).toHaveLength(0)
    expect(unsubscribed.requests).toHaveLength(0)
    expect(foreign.requests).toHaveLength(0)
    expect(await log(o, off.id)).toEqual([])
    // Switched on, it receives the next event.
    await t.request('PATCH', `/v1/spaces/${o.slug}/webhooks/${off.id}`, { token: o.token, body: { active: true } })
    await emit(o.spaceId)
    await drain()
    expect(inactive.requests).toHaveLength(1)
  })

  test('a rolled-back change sends nothing', async () => {
    const o = await owner()
    const r = receiver()
    await subscribe(o, { url: r.url })
    await expect(
      transact(t.kernel, async (_tx, e) => {
        e({ type: 'story.published', spaceId: o.spaceId, payload: { story: STORY } })
        throw new Error('validation failed after the emit')
      }),
    ).rejects.toThrow()
    await drain()
    t.clock.advance(HOUR)
    await drain()
    expect(r.requests).toHaveLength(0)
  })
})

describe('retries', () => {
  test('a 5xx is retried after 30 s, 5 min, 30 min, 2 h and 12 h, under one delivery id; then failed, the subscription still active', async () => {
    const o = await owner()
    const r = receiver(() => new Response('try later', { status: 503 }))
    const hook = await subscribe(o, { url: r.url })
    await emit(o.spaceId)
    await drain()
    expect(r.requests).toHaveLength(1)
    const deliveryId = r.requests[0].headers['x-service-delivery']

    let entries = await log(o, hook.id)
    expect(entries.map((e) => [e.retry_count, e.outcome])).toEqual([
      [1, 'pending'],
      [0, 'failed'],
    ])
    expect(entries[0].next_attempt_at).toBe(new Date(t.clock.now().getTime() + 30 * SECOND).toISOString())
    expect(entries[1]).toMatchObject({ response_status: 503, response_body: 'try later', next_attempt_at: null, delivery_status: 'pending' })

    const schedule = [30 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 12 * HOUR]
    for (const [i, delay] of schedule.entries()) {
      t.clock.advance(delay - 1)
      await drain()
      expect(r.requests).toHaveLength(i + 1)
      t.clock.advance(1)
      await drain()
      expect(r.requests).toHaveLength(i + 2)
      expect(r.requests[i + 1].headers['x-service-delivery']).toBe(deliveryId)
      expect(signatureValid(hook.secret, r.requests[i + 1])).toBe(true)
    }
    // Five retries used: the delivery has failed for good.
    t.clock.advance(48 * HOUR)
    await drain()
    expect(r.requests).toHaveLength(6)
    entries = await log(o, hook.id)
    expect(entries.map((e) => e.retry_count)).toEqual([5, 4, 3, 2, 1, 0])
    expect(entries.every((e) => e.outcome === 'failed' && e.response_status === 503 && e.delivery_status === 'failed')).toBe(true)
    expect(entries.every((e) => e.next_attempt_at === null && e.delivery_id === deliveryId)).toBe(true)
    // Each attempt's delivered_at is its own time; the timestamps in the log are newest first.
    const times = entries.map((e) => Date.parse(e.timestamp))
    expect([...times].sort((a, b) => b - a)).toEqual(times)

    // The subscription stays active and delivers the next event.
    const again = await t.request('GET', `/v1/spaces/${o.slug}/webhooks/${hook.id}`, { token: o.token })
    expect(again.body.data.active).toBe(true)
    r.respond(() => new Response('fine'))
    await emit(o.spaceId)
    await drain()
    expect(r.requests).toHaveLength(7)
    expect(r.requests[6].headers['x-service-delivery']).not.toBe(deliveryId)
  })

  test('a 4xx is not retried', async () => {
    const o = await owner()
    const r = receiver(() => new Response('no such hook', { status: 404 }))
    const hook = await subscribe(o, { url: r.url })
    await emit(o.spaceId)
    await drain()
    t.clock.advance(13 * HOUR)
    await drain()
    expect(r.requests).toHaveLength(1)
    const entries = await log(o, hook.id)
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({ response_status: 404, response_body: 'no such hook', outcome: 'failed', delivery_status: 'failed', retry_count: 0 })
  })

  test('a retry that succeeds is delivered under the same delivery id', async () => {
    const o = await owner()
    const r = receiver((_req, i) => (i === 0 ? new Response('oops', { status: 500 }) : new Response('thanks', { status: 202 })))
    const hook = await subscribe(o, { url: r.url })
    await emit(o.spaceId)
    await drain()
    t.clock.advance(30 * SECOND)
    await drain()
    expect(r.requests).toHaveLength(2)
    expect(r.requests[1].headers['x-service-delivery']).toBe(r.requests[0].headers['x-service-delivery'])
    expect(r.requests[1].json.delivered_at).toBe(t.clock.now().toISOString())
    const entries = await log(o, hook.id)
    expect(entries.map((e) => [e.retry_count, e.outcome, e.response_status])).toEqual([
      [1, 'delivered', 202],
      [0, 'failed', 500],
    ])
    expect(entries.every((e) => e.delivery_status === 'delivered')).toBe(true)
    t.clock.advance(HOUR)
    await drain()
    expect(r.requests).toHaveLength(2)
  })

  test('timeouts and refused connections are retried', async () => {
    const o = await owner()
    // Held open until the delivery has timed out (released below), however fast or slow the machine.
    const { promise: released, resolve: release } = Promise.withResolvers<void>()
    const slow = receiver(async () => {
      await released
      return new Response('late')
    })
    const gone = receiver()
    await gone.stop()
    const slowHook = await subscribe(o, { url: slow.url })
    const goneHook = await subscribe(o, { url: gone.url })
    await emit(o.spaceId)
    await drain()
    expect(slow.requests).toHaveLength(1)
    const [pendingSlow, timedOut] = await log(o, slowHook.id)
    expect(timedOut).toMatchObject({ outcome: 'failed', response_status: null, retry_count: 0 })
    expect(timedOut.error).toContain('timeout')
    expect(pendingSlow).toMatchObject({ outcome: 'pending', retry_count: 1 })
    const [pendingGone, refused] = await log(o, goneHook.id)
    expect(refused).toMatchObject({ outcome: 'failed', response_status: null })
    expect(refused.error).toContain('connection_failed')
    expect(pendingGone.outcome).toBe('pending')
    release()
    // Fast again: the retry goes through.
    slow.respond(() => new Response('ok'))
    t.clock.advance(30 * SECOND)
    await drain()
    expect(slow.requests).toHaveLength(2)
    expect((await log(o, slowHook.id))[0]).toMatchObject({ outcome: 'delivered', retry_count: 1 })
    await t.request('DELETE', `/v1/spaces/${o.slug}/webhooks/${goneHook.id}`, { token: o.token })
  })

  test('redirects are not followed, and not retried', async () => {
    const o = await owner()
    const target = receiver()
    const r = receiver(() => new Response(null, { status: 302, headers: { Location: `${target.url}/elsewhere` } }))
    const hook = await subscribe(o, { url: r.url })
    await emit(o.spaceId)
    await drain()
    t.clock.advance(HOUR)
    await drain()
    expect(r.requests).toHaveLength(1)
    expect(target.requests).toHaveLength(0)
    const [entry] = await log(o, hook.id)
    expect(entry).toMatchObject({ outcome: 'failed', response_status: 302 })
    expect(entry.error).toContain('redirect')
  })

  test('response bodies are kept to 4 KB in the log', async () => {
    const o = await owner()
    const r = receiver(() => new Response('x'.repeat(10_000) + 'END'))
    const hook = await subscribe(o, { url: r.url })
    await emit(o.spaceId)
    await drain()
    const [entry] = await log(o, hook.id)
    expect(entry.outcome).toBe('delivered')
    expect(entry.response_body).toHaveLength(4096)
    expect(entry.response_body).toBe('x'.repeat(4096))
    // A multi-byte character cut at the limit is dropped, not mangled.
    r.respond(() => new Response('a' + 'é'.repeat(3000)))
    await emit(o.spaceId)
    await drain()
    const [second] = await log(o, hook.id)
    expect(new TextEncoder().encode(second.response_body).length).toBeLessThanOrEqual(4096)
    expect(second.response_body).toBe('a' + 'é'.repeat(2047))
  })

  test('deleting a subscription cancels its pending deliveries', async () => {
    const o = await owner()
    const r = receiver(() => new Response('down', { status: 500 }))
    const hook = await subscribe(o, { url: r.url })
    await emit(o.spaceId)
    await drain()
    expect(r.requests).toHaveLength(1)
    const deliveryId = r.requests[0].headers['x-service-delivery']
    const del = await t.request('DELETE', `/v1/spaces/${o.slug}/webhooks/${hook.id}`, { token: o.token })
    expect(del.status).toBe(204)
    expect((await t.request('GET', `/v1/spaces/${o.slug}/webhooks/${hook.id}`, { token: o.token })).status).toBe(404)
    const [job] = await t.kernel.db.query<{ status: string }>('select status from jobs where dedupe_key = $1', [deliveryId])
    expect(job.status).toBe('cancelled')
    t.clock.advance(13 * HOUR)
    await drain()
    expect(r.requests).toHaveLength(1)
  })

  test('a subscription switched off before a retry is not called again', async () => {
    const o = await owner()
    const r = receiver(() => new Response('down', { status: 500 }))
    const hook = await subscribe(o, { url: r.url })
    await emit(o.spaceId)
    await drain()
    await t.request('PATCH', `/v1/spaces/${o.slug}/webhooks/${hook.id}`, { token: o.token, body: { active: false } })
    t.clock.advance(30 * SECOND)
    await drain()
    expect(r.requests).toHaveLength(1)
    const [latest] = await log(o, hook.id)
    expect(latest).toMatchObject({ outcome: 'failed', delivery_status: 'failed', error: 'the subscription is inactive' })
  })
})

describe('secrets, log, redeliver, ping', () => {
  test('rotate-secret returns a new secret; later deliveries are signed with it only', async () => {
    const o = await owner()
    const r = receiver()
    const hook = await subscribe(o, { url: r.url })
    const res = await t.request('POST', `/v1/spaces/${o.slug}/webhooks/${hook.id}/rotate-secret`, { token: o.token })
    expect(res.status).toBe(200)
    const secret = res.body.data.secret
    expect(secret).toMatch(/^whsec_/)
    expect(secret).not.toBe(hook.secret)
    expect(res.body.data.id).toBe(hook.id)
    const read = await t.request('GET', `/v1/spaces/${o.slug}/webhooks/${hook.id}`, { token: o.token })
    expect(read.text).not.toContain(secret)
    await emit(o.spaceId)
    await drain()
    expect(signatureValid(secret, r.requests[0])).toBe(true)
    expect(signatureValid(hook.secret, r.requests[0])).toBe(false)
  })

  test('the delivery log is newest first, 50 entries by default, at most 200', async () => {
    const o = await owner()
    const r = receiver()
    const hook = await subscribe(o, { url: r.url })
    for (let i = 0; i < 60; i++) {
      await emit(o.spaceId, 'story.published', { ...STORY, slug: `s-${i}` })
      t.clock.advance(SECOND)
    }
    await drain()
    expect(r.requests).toHaveLength(60)
    const all = await log(o, hook.id, '?limit=200')
    expect(all).toHaveLength(60)
    expect((await log(o, hook.id))).toHaveLength(50)
    const five = await log(o, hook.id, '?limit=5')
    expect(five).toHaveLength(5)
    expect(five).toEqual(all.slice(0, 5))
    const times = all.map((e) => Date.parse(e.timestamp))
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    // Newest first: the last delivery sent is the first entry.
    const lastSent = r.requests.at(-1)!.headers['x-service-delivery']
    expect(all.some((e) => e.delivery_id === lastSent)).toBe(true)
    for (const bad of ['?limit=0', '?limit=201', '?limit=abc', '?limit=1.5']) {
      const res = await t.request('GET', `/v1/spaces/${o.slug}/webhooks/${hook.id}/deliveries${bad}`, { token: o.token })
      expect(res.status).toBe(422)
    }
  })

  test('a pending delivery shows its next attempt time; one not yet tried shows as pending', async () => {
    const o = await owner()
    const r = receiver()
    const hook = await subscribe(o, { url: r.url })
    await emit(o.spaceId)
    // Fanned out, not yet sent.
    await t.kernel.jobs.relayBatch()
    const [queued] = await log(o, hook.id)
    expect(queued).toMatchObject({ outcome: 'pending', retry_count: 0, response_status: null, delivery_status: 'pending' })
    expect(queued.next_attempt_at).toBe(t.clock.now().toISOString())
    await drain()
    const [done] = await log(o, hook.id)
    expect(done).toMatchObject({ id: queued.id, outcome: 'delivered', next_attempt_at: null })
  })

  test('redeliver sends a past delivery again as a new delivery of the same event', async () => {
    const o = await owner()
    const r = receiver()
    const hook = await subscribe(o, { url: r.url })
    await emit(o.spaceId)
    await drain()
    const original = r.requests[0]
    const originalId = original.headers['x-service-delivery']
    t.clock.advance(MINUTE)
    const res = await t.request('POST', `/v1/spaces/${o.slug}/webhooks/${hook.id}/deliveries/${originalId}/redeliver`, { token: o.token })
    expect(res.status).toBe(202)
    expect(res.body.data).toMatchObject({ event: 'story.published', outcome: 'pending', redelivery_of: originalId })
    await drain()
    expect(r.requests).toHaveLength(2)
    const again = r.requests[1]
    expect(again.headers['x-service-delivery']).toBe(res.body.data.delivery_id)
    expect(again.headers['x-service-delivery']).not.toBe(originalId)
    expect(again.json.story).toEqual(original.json.story)
    expect(again.json.delivered_at).toBe(t.clock.now().toISOString())
    expect(signatureValid(hook.secret, again)).toBe(true)
    const [entry] = await log(o, hook.id)
    expect(entry).toMatchObject({ delivery_id: res.body.data.delivery_id, redelivery_of: originalId, outcome: 'delivered' })
    const missing = await t.request('POST', `/v1/spaces/${o.slug}/webhooks/${hook.id}/deliveries/${crypto.randomUUID()}/redeliver`, { token: o.token })
    expect(missing.status).toBe(404)
    expect((await t.request('POST', `/v1/spaces/${o.slug}/webhooks/${hook.id}/deliveries/nope/redeliver`, { token: o.token })).status).toBe(404)
  })

  test('ping sends a signed test event', async () => {
    const o = await owner()
    const r = receiver()
    const hook = await subscribe(o, { url: r.url, events: ['story.deleted'] })
    const res = await t.request('POST', `/v1/spaces/${o.slug}/webhooks/${hook.id}/ping`, { token: o.token })
    expect(res.status).toBe(202)
    await drain()
    expect(r.requests).toHaveLength(1)
    const req = r.requests[0]
    expect(req.headers['x-service-event']).toBe('ping')
    expect(req.headers['x-service-delivery']).toBe(res.body.data.delivery_id)
    expect(req.json).toEqual({
      event: 'ping',
      delivered_at: t.clock.now().toISOString(),
      space: { slug: o.slug },
      webhook: { id: hook.id, label: 'Test hook', events: ['story.deleted'] },
    })
    expect(signatureValid(hook.secret, req)).toBe(true)
  })
})

test('ping and redeliver are rate limited per client (60 a minute)', async () => {
  const o = await owner()
  const r = receiver()
  const hook = await subscribe(o, { url: r.url })
  const statuses: number[] = []
  for (let i = 0; i < 61; i++) {
    statuses.push((await t.request('POST', `/v1/spaces/${o.slug}/webhooks/${hook.id}/ping`, { token: o.token, ip: '10.77.0.1' })).status)
  }
  expect(statuses.slice(0, 60).every((s) => s === 202)).toBe(true)
  expect(statuses[60]).toBe(429)
  await drain()
  expect(r.requests).toHaveLength(60)
})

describe('outbound safety', () => {
  let strict: Kernel
  let strictApp: Runtime

  beforeAll(async () => {
    // A second instance on the same database, configured as production is by default: private targets refused.
    strict = await createKernel(loadConfig({ LOG_LEVEL: process.env.STRICT_LOG ?? 'silent' }, { memoryDb: true, outboundAllowPrivate: false, webhookTimeoutMs: 400, secretKey: SECRET_KEY }), {
      clock: t.clock,
      database: t.kernel.db,
      migrate: false,
    })
    strictApp = createRuntime(strict)
    await strictApp.start()
  })

  afterAll(async () => {
    await strictApp.close()
  })

  async function strictPost(o: Owner, path: string, method: string, body: unknown) {
    const res = await strictApp.handle(
      new Request(`http://localhost/v1/spaces/${o.slug}/webhooks${path}`, {
        method,
        headers: { Authorization: `Bearer ${o.token}`, 'Content-Type': 'application/json', 'X-Forwarded-For': '10.9.9.9' },
        body: JSON.stringify(body),
      }),
    )
    return { status: res.status, body: (await res.json()) as any }
  }

  test('SERVICE_OUTBOUND_ALLOW_PRIVATE is read from the environment, false by default', () => {
    expect(loadConfig({}).outboundAllowPrivate).toBe(false)
    expect(loadConfig({ SERVICE_OUTBOUND_ALLOW_PRIVATE: 'true' }).outboundAllowPrivate).toBe(true)
    expect(() => loadConfig({ SERVICE_OUTBOUND_ALLOW_PRIVATE: 'maybe' })).toThrow()
  })

  test('internal addresses are recognised, IPv4 and IPv6, mapped forms included', () => {
    for (const ip of [
      '127.0.0.1', '127.1.2.3', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
      '0.0.0.0', '224.0.0.1', '239.255.255.250', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1',
      'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a00:1',
    ]) {
      expect([ip, isInternalAddress(ip)]).toEqual([ip, true])
    }
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect([ip, isInternalAddress(ip)]).toEqual([ip, false])
    }
  })

  test('creating or pointing a subscription at an internal address is refused with 422', async () => {
    const o = await owner()
    for (const url of [
      'http://127.0.0.1:9/hook',
      'http://localhost:9/hook',
      'http://[::1]:9/',
      'http://10.1.2.3/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:127.0.0.1]/',
      'http://0.0.0.0/',
      'http://2130706433/',
      'https://192.168.0.10/',
      'http://224.0.0.1/',
    ]) {
      const res = await strictPost(o, '', 'POST', { label: 'x', url, events: ['story.published'] })
      expect([url, res.status]).toEqual([url, 422])
      if (url.includes('169.254.169.254')) {
        // Metadata addresses are closed whatever the setting says, and the refusal says so.
        expect(res.body.errors.url[0]).toContain('cloud metadata address')
        expect(res.body.errors.url[0]).toContain('does not open it')
        continue
      }
      expect(res.body.errors.url[0]).toContain('internal')
      // The refusal names the setting that allows it.
      expect(res.body.errors.url[0]).toContain('SERVICE_OUTBOUND_ALLOW_PRIVATE')
    }
    const r = receiver()
    const hook = await subscribe(o, { url: r.url })
    const patch = await strictPost(o, `/${hook.id}`, 'PATCH', { url: 'http://127.0.0.1:1/' })
    expect(patch.status).toBe(422)
  })

  test('the address is checked again at delivery time, after DNS: a refused target is not called and not retried', async () => {
    const o = await owner()
    const r = receiver()
    // Accepted by the permissive instance (as if DNS had said "public" then); delivered by the strict one.
    const hook = await subscribe(o, { url: `http://localhost:${r.port}/hook` })
    await emit(o.spaceId)
    await strict.jobs.runDueJobs()
    t.clock.advance(HOUR)
    await strict.jobs.runDueJobs()
    expect(r.requests).toHaveLength(0)
    const [entry] = await log(o, hook.id)
    expect(entry).toMatchObject({ outcome: 'failed', delivery_status: 'failed', response_status: null })
    expect(entry.error).toContain('blocked_address')
    expect(entry.error).toContain('SERVICE_OUTBOUND_ALLOW_PRIVATE')
  })
})

describe('the key that seals secrets', () => {
  test('SecretBox opens only what it sealed, with the same key and context, unaltered', () => {
    const box = new SecretBox(new Uint8Array(32).fill(7))
    const sealed = box.seal('whsec_abc', 'webhook-secret')
    expect(sealed).not.toBe(box.seal('whsec_abc', 'webhook-secret')) // a fresh IV each time
    expect(box.open(sealed, 'webhook-secret')).toBe('whsec_abc')
    expect(() => box.open(sealed, 'other-purpose')).toThrow()
    expect(() => new SecretBox(new Uint8Array(32).fill(8)).open(sealed, 'webhook-secret')).toThrow()
    const [v, iv, ct, tag] = sealed.split('.')
    const flipped = `${v}.${iv}.${ct.slice(0, -2)}${ct.slice(-2) === 'AA' ? 'AB' : 'AA'}.${tag}`
    expect(() => box.open(flipped, 'webhook-secret')).toThrow()
  })

  test('SERVICE_SECRET_KEY must be 32 bytes; without it the embedded default generates one key file and keeps it', async () => {
    expect(() => loadConfig({ SERVICE_SECRET_KEY: 'short' })).toThrow('SERVICE_SECRET_KEY')
    expect(loadConfig({ SERVICE_SECRET_KEY: 'ab'.repeat(32) }).secretKey).toBe('ab'.repeat(32))
    expect(loadConfig({ SERVICE_SECRET_KEY: Buffer.alloc(32, 1).toString('base64') }).secretKey).toBeString()
    const dir = mkdtempSync(join(tmpdir(), 'cs-key-'))
    try {
      const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: dir })
      const opts = { database: t.kernel.db, migrate: false, clock: t.clock }
      const a = await createKernel(config, opts)
      const keyFile = join(dir, 'secret.key')
      expect(statSync(keyFile).mode & 0o777).toBe(0o600)
      expect(readFileSync(keyFile, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/)
      const b = await createKernel(config, opts)
      expect(b.secrets.open(a.secrets.seal('same key?'))).toBe('same key?')
      // Shared Postgres needs the variable: instances cannot share a file.
      await expect(createKernel(loadConfig({ DATABASE_URL: 'postgres://nowhere/db' }), opts)).rejects.toThrow('SERVICE_SECRET_KEY is required')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('retention', () => {
  test('finished deliveries leave the log after 30 days', async () => {
    const o = await owner()
    // User tokens expire after 30 days; a Space token does not.
    const { token } = await t.spaceToken(o.token, o.slug, 'admin')
    const admin = { ...o, token }
    const ok = receiver()
    const down = receiver(() => new Response('down', { status: 503 }))
    const done = await subscribe(o, { url: ok.url })
    await emit(o.spaceId)
    await drain()
    const [first] = await log(admin, done.id)
    t.clock.advance(29 * 24 * HOUR)
    await drain()
    expect((await log(admin, done.id)).map((e) => e.delivery_id)).toEqual([first.delivery_id])
    const failing = await subscribe(o, { url: down.url })
    await emit(o.spaceId)
    await drain()
    const [second] = await log(admin, done.id)
    t.clock.advance(2 * 24 * HOUR)
    await drain()
    // The first delivery finished 31 days ago: gone. The second stays, and so does the one still being retried
    // (one clock jump makes one retry: each next attempt is scheduled from the time of the one before).
    expect((await log(admin, done.id)).map((e) => e.delivery_id)).toEqual([second.delivery_id])
    const retrying = await log(admin, failing.id)
    expect(retrying.map((e) => [e.retry_count, e.outcome])).toEqual([
      [2, 'pending'],
      [1, 'failed'],
      [0, 'failed'],
    ])
  })
})
