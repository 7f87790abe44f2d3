import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import ICAL from 'ical.js'
import { type TestApp, testApp } from './helpers/app'
import { startReceiver } from './helpers/receiver'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'

setDefaultTimeout(60_000)

let t: TestApp
let sink: SmtpSink
let admin: string
let editor: string
let viewer: string
let stranger: string
let space: string
let ownerTenant: number

const HOUR = 3_600_000
const DAY = 24 * HOUR
const iso = (ms: number) => new Date(ms).toISOString()

beforeAll(async () => {
  sink = await startSmtpSink()
  t = await testApp({ publicUrl: 'https://cms.example.com', outboundAllowPrivate: true }, { SMTP_URL: sink.url })
  const owner = await t.register()
  admin = owner.token
  ownerTenant = owner.tenant.id
  space = (await t.createSpace(admin, { name: 'Acme Events', default_lang: 'en', locales: ['en', 'de'] })).slug
  editor = await t.member(ownerTenant, space, 'editor')
  viewer = await t.member(ownerTenant, space, 'viewer')
  stranger = (await t.register()).token
})

afterAll(async () => {
  await t?.close()
  await sink?.stop()
})

let slugCounter = 0
function eventBody(over: Record<string, unknown> = {}) {
  slugCounter++
  const start = t.clock.ms() + 7 * DAY
  return {
    slug: `meetup-${slugCounter}`,
    title: { en: 'Bun meetup', de: 'Bun-Treffen' },
    description: { en: 'Talks and pizza', de: 'Vorträge und Pizza' },
    starts_at: iso(start),
    ends_at: iso(start + 2 * HOUR),
    timezone: 'Europe/Berlin',
    location: { name: 'Hall A', address: 'Main St 1, Berlin', url: 'https://venue.example.com' },
    capacity: null,
    published: true,
    ...over,
  }
}

async function createEvent(over: Record<string, unknown> = {}, token = admin) {
  const r = await t.request('POST', `/v1/spaces/${space}/events`, { token, body: eventBody(over) })
  if (r.status !== 201) throw new Error(`create event: ${r.status} ${r.text}`)
  return r.body.data as { id: string; slug: string; sequence: number; [k: string]: unknown }
}

const register = (slug: string, body: Record<string, unknown>, opts: { ip?: string; s?: string; headers?: Record<string, string> } = {}) =>
  t.request('POST', `/v1/cdn/${opts.s ?? space}/events/${slug}/register`, { body, ip: opts.ip, headers: opts.headers })

/** Runs the mail jobs and answers the last mail to `to` with its links (as paths). */
async function mailTo(to: string) {
  await t.kernel.jobs.runDueJobs()
  const mail = [...sink.mails].reverse().find((m) => m.to.includes(to))
  if (!mail) throw new Error(`no mail to ${to}`)
  const text = mail.parsed.text ?? ''
  const ics = /https:\/\/cms\.example\.com(\/v1\/cdn\/\S+\/ics\/[A-Za-z0-9_-]{43})/.exec(text)?.[1]
  const cancel = /https:\/\/cms\.example\.com(\/v1\/cdn\/\S+\/cancel\/[A-Za-z0-9_-]{43})/.exec(text)?.[1]
  return { mail, text, ics: ics!, cancel: cancel! }
}

function parseIcs(text: string) {
  const comp = new ICAL.Component(ICAL.parse(text))
  for (const vtz of comp.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(vtz)
  const vevent = comp.getFirstSubcomponent('vevent')!
  return { comp, vevent, event: new ICAL.Event(vevent) }
}

describe('management', () => {
  test('create, read, list with paging, replace (sequence bumps), delete', async () => {
    const e = await createEvent({ capacity: 10, waitlist: true })
    expect({ ...e }).toMatchObject({ slug: expect.any(String), timezone: 'Europe/Berlin', capacity: 10, waitlist: true, registration_open: true, published: true, confirmed_count: 0, waitlisted_count: 0, sequence: 0 })
    const got = await t.request('GET', `/v1/spaces/${space}/events/${e.id}`, { token: viewer })
    expect(got.status).toBe(200)
    expect(got.body.data.title).toEqual({ en: 'Bun meetup', de: 'Bun-Treffen' })
    await createEvent()
    const page = await t.request('GET', `/v1/spaces/${space}/events?per_page=1&page=2`, { token: viewer })
    expect(page.status).toBe(200)
    expect(page.body.data).toHaveLength(1)
    expect(page.body.meta).toMatchObject({ page: 2, per_page: 1 })
    expect(page.body.meta.total).toBeGreaterThanOrEqual(2)
    const put = await t.request('PUT', `/v1/spaces/${space}/events/${e.id}`, { token: editor, body: eventBody({ slug: e.slug, title: { en: 'Bun meetup #2' } }) })
    expect(put.status).toBe(200)
    expect(put.body.data.sequence).toBe(1)
    expect(put.body.data.title).toEqual({ en: 'Bun meetup #2' })
    expect((await t.request('DELETE', `/v1/spaces/${space}/events/${e.id}`, { token: editor })).status).toBe(204)
    expect((await t.request('GET', `/v1/spaces/${space}/events/${e.id}`, { token: viewer })).status).toBe(404)
  })

  test('when=upcoming|past splits the list at now (past: latest first); another value → 422', async () => {
    const past1 = await createEvent({ starts_at: iso(t.clock.ms() - 10 * DAY), ends_at: iso(t.clock.ms() - 10 * DAY + HOUR) })
    const past2 = await createEvent({ starts_at: iso(t.clock.ms() - 3 * DAY), ends_at: iso(t.clock.ms() - 3 * DAY + HOUR) })
    const running = await createEvent({ starts_at: iso(t.clock.ms() - HOUR), ends_at: iso(t.clock.ms() + HOUR) })
    const slugs = async (when: string) => ((await t.request('GET', `/v1/spaces/${space}/events?per_page=100&when=${when}`, { token: viewer })).body.data as { slug: string }[]).map((e) => e.slug)
    const past = await slugs('past')
    expect(past.indexOf(past2.slug)).toBeGreaterThanOrEqual(0)
    expect(past.indexOf(past2.slug)).toBeLessThan(past.indexOf(past1.slug))
    expect(past).not.toContain(running.slug)
    const upcoming = await slugs('upcoming')
    expect(upcoming).toContain(running.slug)
    expect(upcoming).not.toContain(past1.slug)
    const bad = await t.request('GET', `/v1/spaces/${space}/events?when=soon`, { token: viewer })
    expect(bad.status).toBe(422)
  })

  test('bad input: time zone, ends before starts, offsets, locales, location url, fields schema, capacity', async () => {
    const bad = async (over: Record<string, unknown>, key: string) => {
      const r = await t.request('POST', `/v1/spaces/${space}/events`, { token: admin, body: eventBody(over) })
      expect(r.status).toBe(422)
      expect(r.body.error).toBe('validation_failed')
      expect(Object.keys(r.body.errors).some((k) => k.startsWith(key))).toBe(true)
    }
    await bad({ timezone: 'Mars/Olympus_Mons' }, 'timezone')
    await bad({ timezone: 'europe/berlin ' }, 'timezone')
    const s = t.clock.ms() + DAY
    await bad({ starts_at: iso(s), ends_at: iso(s - HOUR) }, 'ends_at')
    await bad({ starts_at: iso(s), ends_at: iso(s) }, 'ends_at')
    await bad({ starts_at: '2026-06-01T18:00:00' }, 'starts_at')
    await bad({ starts_at: 'tomorrow' }, 'starts_at')
    // Impossible dates are refused naming their own field, never rolled over into the next month.
    const exact = async (over: Record<string, unknown>, keys: string[]) => {
      const r = await t.request('POST', `/v1/spaces/${space}/events`, { token: admin, body: eventBody(over) })
      expect({ over, status: r.status, keys: Object.keys(r.body.errors ?? {}) }).toEqual({ over, status: 422, keys })
    }
    await exact({ starts_at: '2026-02-30T10:00:00Z', ends_at: '2026-03-02T12:00:00Z' }, ['starts_at'])
    await exact({ starts_at: '2027-02-29T10:00:00+01:00', ends_at: '2027-03-02T12:00:00Z' }, ['starts_at'])
    await exact({ starts_at: '2026-04-30T10:00:00Z', ends_at: '2026-04-31T12:00:00Z' }, ['ends_at'])
    await exact({ starts_at: '2026-05-01T24:00:00Z', ends_at: '2026-05-02T12:00:00Z' }, ['starts_at'])
    await exact({ starts_at: '2026-05-01T10:00:00+25:00', ends_at: '2026-05-02T12:00:00Z' }, ['starts_at'])
    await exact({ registration_closes_at: '2026-06-31T00:00:00Z' }, ['registration_closes_at'])
    // A leap day is a real day.
    const leap = await t.request('POST', `/v1/spaces/${space}/events`, { token: admin, body: eventBody({ starts_at: '2028-02-29T10:00:00Z', ends_at: '2028-02-29T12:00:00+01:00' }) })
    expect(leap.status).toBe(201)
    expect(leap.body.data.starts_at).toBe('2028-02-29T10:00:00.000Z')
    expect(leap.body.data.ends_at).toBe('2028-02-29T11:00:00.000Z')
    const list = await t.request('GET', `/v1/cdn/${space}/events?from=2026-02-30`)
    expect({ status: list.status, keys: Object.keys(list.body.errors ?? {}) }).toEqual({ status: 422, keys: ['from'] })
    await bad({ title: { fr: 'Rencontre' } }, 'title')
    await bad({ title: {} }, 'title')
    await bad({ location: { name: 'x', url: 'javascript:alert(1)' } }, 'location/url')
    await bad({ fields: { type: 'object', properties: { size: { type: 'no-such-type' } } } }, 'fields')
    await bad({ fields: { type: 'array' } }, 'fields')
    const cap = await t.request('POST', `/v1/spaces/${space}/events`, { token: admin, body: eventBody({ capacity: 0 }) })
    expect(cap.status).toBe(422)
    const extra = await t.request('POST', `/v1/spaces/${space}/events`, { token: admin, body: { ...eventBody(), surprise: 1 } })
    expect(extra.status).toBe(422)
  })

  test('slug taken → 409; viewer cannot write (403); another tenant sees nothing (404)', async () => {
    const e = await createEvent()
    const dup = await t.request('POST', `/v1/spaces/${space}/events`, { token: admin, body: eventBody({ slug: e.slug }) })
    expect(dup.status).toBe(409)
    expect(dup.body.error).toBe('slug_taken')
    expect((await t.request('POST', `/v1/spaces/${space}/events`, { token: viewer, body: eventBody() })).status).toBe(403)
    expect((await t.request('GET', `/v1/spaces/${space}/events`, { token: stranger })).status).toBe(404)
    expect((await t.request('GET', `/v1/spaces/${space}/events/${e.id}`, { token: stranger })).status).toBe(404)
    expect((await t.request('GET', `/v1/spaces/${space}/events/${e.id}/registrations`, { token: stranger })).status).toBe(404)
    // The stranger's own Space does not reach this Space's event by id either.
    const theirs = (await t.createSpace(stranger)).slug
    expect((await t.request('GET', `/v1/spaces/${theirs}/events/${e.id}`, { token: stranger })).status).toBe(404)
    expect((await t.request('DELETE', `/v1/spaces/${theirs}/events/${e.id}`, { token: stranger })).status).toBe(404)
  })
})

describe('public reads', () => {
  test('only published, upcoming by default; from/to; locale chain; ETag, 304, Vary, Cache-Control', async () => {
    const other = (await t.createSpace(admin, { default_lang: 'en', locales: ['en', 'de'] })).slug
    const make = (over: Record<string, unknown>) =>
      t.request('POST', `/v1/spaces/${other}/events`, { token: admin, body: eventBody(over) }).then((r) => {
        if (r.status !== 201) throw new Error(r.text)
        return r.body.data
      })
    const now = t.clock.ms()
    const soon = await make({ starts_at: iso(now + DAY), ends_at: iso(now + DAY + HOUR), capacity: 5 })
    const later = await make({ starts_at: iso(now + 30 * DAY), ends_at: iso(now + 30 * DAY + HOUR), title: { en: 'Later', de: 'Später' }, description: { en: 'Only English' } })
    await make({ starts_at: iso(now - 3 * DAY), ends_at: iso(now - 3 * DAY + HOUR) }) // past
    await make({ published: false }) // draft

    const list = await t.request('GET', `/v1/cdn/${other}/events`)
    expect(list.status).toBe(200)
    expect(list.body.data.map((e: { slug: string }) => e.slug)).toEqual([soon.slug, later.slug])
    expect(list.body.meta).toEqual({ total: 2, page: 1, per_page: 20 })
    expect(list.headers.get('etag')).toMatch(/^"/)
    expect(list.headers.get('vary')).toContain('Accept-Language')
    expect(list.headers.get('cache-control')).toContain('public, max-age=')
    const again = await t.request('GET', `/v1/cdn/${other}/events`, { headers: { 'If-None-Match': list.headers.get('etag')! } })
    expect(again.status).toBe(304)

    const all = await t.request('GET', `/v1/cdn/${other}/events?from=2000-01-01`)
    expect(all.body.meta.total).toBe(3)
    const window = await t.request('GET', `/v1/cdn/${other}/events?from=${encodeURIComponent(iso(now))}&to=${encodeURIComponent(iso(now + 2 * DAY))}`)
    expect(window.body.data.map((e: { slug: string }) => e.slug)).toEqual([soon.slug])
    expect((await t.request('GET', `/v1/cdn/${other}/events?from=yesterday`)).status).toBe(422)
    expect((await t.request('GET', `/v1/cdn/${other}/events?to=2026-02-30`)).status).toBe(422)

    const de = await t.request('GET', `/v1/cdn/${other}/events/${later.slug}?lang=de`)
    expect(de.body.data).toMatchObject({ lang: 'de', title: 'Später', description: 'Only English' })
    const deAt = await t.request('GET', `/v1/cdn/${other}/events/${later.slug}?lang=de-AT`)
    expect(deAt.body.data.title).toBe('Später')
    const fr = await t.request('GET', `/v1/cdn/${other}/events/${later.slug}?lang=fr`)
    expect(fr.body.data).toMatchObject({ lang: 'en', title: 'Later' })
    const accept = await t.request('GET', `/v1/cdn/${other}/events/${later.slug}`, { headers: { 'Accept-Language': 'de-CH, en;q=0.5' } })
    expect(accept.body.data.title).toBe('Später')
    expect((await t.request('GET', `/v1/cdn/${other}/events/${later.slug}?lang=%20x`)).status).toBe(422)

    const detail = await t.request('GET', `/v1/cdn/${other}/events/${soon.slug}`)
    expect(detail.body.data).toMatchObject({ capacity: 5, spots_left: 5, registration_open: true, timezone: 'Europe/Berlin' })
    const etag = detail.headers.get('etag')!
    expect((await t.request('GET', `/v1/cdn/${other}/events/${soon.slug}`, { headers: { 'If-None-Match': etag } })).status).toBe(304)
    expect((await t.request('GET', `/v1/cdn/${other}/events/no-such-event`)).status).toBe(404)
    // Unpublished events and events of other Spaces are not found.
    expect((await t.request('GET', `/v1/cdn/${space}/events/${soon.slug}`)).status).toBe(404)
    expect((await t.request('GET', `/v1/cdn/no-such-space/events`)).status).toBe(404)
  })

  test('GraphQL: events and event', async () => {
    const e = await createEvent({ capacity: 3 })
    const r = await t.request('POST', '/v1/graphql', {
      body: {
        query: `query($space: String!, $slug: String!) { events(space: $space, perPage: 50) { total items { slug title } } event(space: $space, slug: $slug, lang: "de") { title spots_left registration_open location { name } } }`,
        variables: { space, slug: e.slug },
      },
    })
    expect(r.status).toBe(200)
    expect(r.body.errors).toBeUndefined()
    expect(r.body.data.events.items.some((i: { slug: string }) => i.slug === e.slug)).toBe(true)
    expect(r.body.data.event).toEqual({ title: 'Bun-Treffen', spots_left: 3, registration_open: true, location: { name: 'Hall A' } })
  })
})

describe('registration', () => {
  test('201 with the calendar link; a mail with calendar and cancel links; the same address again → 409', async () => {
    const e = await createEvent({ capacity: 10 })
    const r = await register(e.slug, { name: 'Ada Lovelace', email: 'Ada@Example.com' })
    expect(r.status).toBe(201)
    expect(r.body.data.registration).toEqual({ id: expect.any(String), status: 'confirmed' })
    expect(r.body.data.ics_url).toMatch(new RegExp(`^https://cms\\.example\\.com/v1/cdn/${space}/events/${e.slug}/ics/[A-Za-z0-9_-]{43}$`))
    expect(r.headers.get('cache-control')).toBe('no-store')
    const { mail, ics, cancel, text } = await mailTo('ada@example.com')
    expect(mail.parsed.subject).toBe('You are registered: Bun meetup')
    expect(text).toContain('Hall A')
    expect(text).toContain('(Europe/Berlin)')
    expect(ics).toBeTruthy()
    expect(cancel).toBeTruthy()
    const again = await register(e.slug, { name: 'Ada', email: 'ada@example.com ' })
    expect(again.status).toBe(409)
    expect(again.body.error).toBe('already_registered')
    const detail = await t.request('GET', `/v1/cdn/${space}/events/${e.slug}`)
    expect(detail.body.data.spots_left).toBe(9)
    // Tokens are stored hashed only.
    const stored = await t.kernel.db.query<{ token_hash: string }>('select token_hash from event_registration_tokens')
    const token = ics.split('/').pop()!
    expect(stored.some((s) => s.token_hash === token)).toBe(false)
    expect(stored.every((s) => /^[0-9a-f]{64}$/.test(s.token_hash))).toBe(true)
  })

  test('bad bodies → 422; honeypot → 200 and nothing stored; unknown or unpublished event → 404', async () => {
    const e = await createEvent()
    const bad = await register(e.slug, { name: '  ', email: 'not-an-address' })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.errors).sort()).toEqual(['email', 'name'])
    expect((await register(e.slug, { email: 'x@example.com' })).status).toBe(422)
    expect((await register(e.slug, { name: 'x', email: 'x@example.com', extra: 1 })).status).toBe(422)
    const hp = await register(e.slug, { name: 'Bot', email: 'bot@example.com', _hp: 'gotcha' })
    expect(hp.status).toBe(200)
    expect(hp.body).toEqual({ ok: true })
    // The honeypot comes first: invalid data, unknown properties or an unknown event with a filled _hp get the same.
    for (const body of [{ _hp: 'x', name: '', email: 'nope' }, { _hp: 'x' }, { _hp: 'x', name: 1, extra: true, fields: 'no' }, { _hp: 7 }]) {
      const r = await register(e.slug, body)
      expect({ body, status: r.status, answer: r.body }).toEqual({ body, status: 200, answer: { ok: true } })
    }
    expect((await register('no-such-event', { _hp: 'x' })).body).toEqual({ ok: true })
    const regs = await t.request('GET', `/v1/spaces/${space}/events/${e.id}/registrations`, { token: admin })
    expect(regs.body.meta.total).toBe(0)
    expect((await register('no-such-event', { name: 'x', email: 'x@example.com' })).status).toBe(404)
    const draft = await createEvent({ published: false })
    expect((await register(draft.slug, { name: 'x', email: 'x@example.com' })).status).toBe(404)
  })

  test('a change of the event applies to the next registration at once (unpublished → 404, switched off → 422)', async () => {
    const e = await createEvent()
    expect((await register(e.slug, { name: 'A', email: 'a@change.example.com' })).status).toBe(201)
    await t.request('PUT', `/v1/spaces/${space}/events/${e.id}`, { token: editor, body: eventBody({ slug: e.slug, registration_open: false }) })
    expect((await register(e.slug, { name: 'B', email: 'b@change.example.com' })).body.error).toBe('registration_closed')
    await t.request('PUT', `/v1/spaces/${space}/events/${e.id}`, { token: editor, body: eventBody({ slug: e.slug, published: false }) })
    expect((await register(e.slug, { name: 'B', email: 'b@change.example.com' })).status).toBe(404)
    await t.request('PUT', `/v1/spaces/${space}/events/${e.id}`, { token: editor, body: eventBody({ slug: `${e.slug}-renamed` }) })
    expect((await register(e.slug, { name: 'B', email: 'b@change.example.com' })).status).toBe(404)
    expect((await register(`${e.slug}-renamed`, { name: 'B', email: 'b@change.example.com' })).status).toBe(201)
  })

  test('extra fields are validated with the event’s JSON Schema (Ajv)', async () => {
    const e = await createEvent({
      fields: {
        type: 'object',
        properties: { diet: { type: 'string', enum: ['any', 'vegetarian', 'vegan'] }, guests: { type: 'integer', minimum: 0, maximum: 2 } },
        required: ['diet'],
        additionalProperties: false,
      },
    })
    const missing = await register(e.slug, { name: 'Grace', email: 'grace@example.com', fields: {} })
    expect(missing.status).toBe(422)
    expect(missing.body.errors['fields/diet']).toBeTruthy()
    const wrong = await register(e.slug, { name: 'Grace', email: 'grace@example.com', fields: { diet: 'meat', guests: 5, x: 1 } })
    expect(wrong.status).toBe(422)
    expect(Object.keys(wrong.body.errors)).toEqual(expect.arrayContaining(['fields/diet', 'fields/guests']))
    const ok = await register(e.slug, { name: 'Grace', email: 'grace@example.com', fields: { diet: 'vegan', guests: 1 } })
    expect(ok.status).toBe(201)
    const regs = await t.request('GET', `/v1/spaces/${space}/events/${e.id}/registrations`, { token: admin })
    expect(regs.body.data[0]).toMatchObject({ name: 'Grace', email: 'grace@example.com', fields: { diet: 'vegan', guests: 1 }, status: 'confirmed' })
  })

  test('closed, past the closing time, or started → 422 registration_closed', async () => {
    const off = await createEvent({ registration_open: false })
    const r1 = await register(off.slug, { name: 'x', email: 'x1@example.com' })
    expect(r1.status).toBe(422)
    expect(r1.body.error).toBe('registration_closed')
    expect((await t.request('GET', `/v1/cdn/${space}/events/${off.slug}`)).body.data.registration_open).toBe(false)
    const closing = await createEvent({ registration_closes_at: iso(t.clock.ms() - 1000) })
    expect((await register(closing.slug, { name: 'x', email: 'x2@example.com' })).body.error).toBe('registration_closed')
    const now = t.clock.ms()
    const running = await createEvent({ starts_at: iso(now - HOUR), ends_at: iso(now + HOUR) })
    expect((await register(running.slug, { name: 'x', email: 'x3@example.com' })).body.error).toBe('registration_closed')
    const soon = await createEvent({ starts_at: iso(now + HOUR), ends_at: iso(now + 2 * HOUR) })
    expect((await register(soon.slug, { name: 'x', email: 'x4@example.com' })).status).toBe(201)
    t.clock.advance(HOUR)
    try {
      expect((await register(soon.slug, { name: 'y', email: 'y4@example.com' })).body.error).toBe('registration_closed')
    } finally {
      t.clock.advance(-HOUR)
    }
  })

  test('200 parallel registrations for 50 spots admit exactly 50; the rest get 409 event_full', async () => {
    const e = await createEvent({ capacity: 50 })
    // Half of them through a second instance on the same database (its own writer and connections, as another process).
    const other = await t.instance()
    const viaOther = async (i: number) => {
      const res = await other.runtime.handle(
        new Request(`http://localhost/v1/cdn/${space}/events/${e.slug}/register`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': `10.99.${i >> 8}.${i & 255}` },
          body: JSON.stringify({ name: `P${i}`, email: `p${i}@race.example.com` }),
        }),
      )
      return { status: res.status, body: await res.json() }
    }
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? viaOther(i) : register(e.slug, { name: `P${i}`, email: `p${i}@race.example.com` }))),
    ).finally(() => other.close())
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 201)).toHaveLength(50)
    expect(statuses.filter((s) => s === 409)).toHaveLength(150)
    expect(results.filter((r) => r.status === 409).every((r) => r.body.error === 'event_full')).toBe(true)
    const got = await t.request('GET', `/v1/spaces/${space}/events/${e.id}`, { token: viewer })
    expect(got.body.data.confirmed_count).toBe(50)
    const regs = await t.request('GET', `/v1/spaces/${space}/events/${e.id}/registrations?status=confirmed`, { token: admin })
    expect(regs.body.meta.total).toBe(50)
    expect((await t.request('GET', `/v1/cdn/${space}/events/${e.slug}`)).body.data.spots_left).toBe(0)
  })

  test('the same address sent 10 times at once is registered once; the others get 409 already_registered', async () => {
    const e = await createEvent({ capacity: 100 })
    const results = await Promise.all(Array.from({ length: 10 }, () => register(e.slug, { name: 'Twin', email: 'twin@example.com' })))
    expect(results.filter((r) => r.status === 201)).toHaveLength(1)
    expect(results.filter((r) => r.status === 409 && r.body.error === 'already_registered')).toHaveLength(9)
    expect((await t.request('GET', `/v1/spaces/${space}/events/${e.id}`, { token: viewer })).body.data.confirmed_count).toBe(1)
  })

  test('waitlist: a full event answers waitlisted; a cancellation promotes the first in line, who gets a mail', async () => {
    const e = await createEvent({ capacity: 1, waitlist: true })
    expect((await register(e.slug, { name: 'First', email: 'first@wait.example.com' })).body.data.registration.status).toBe('confirmed')
    const second = await register(e.slug, { name: 'Second', email: 'second@wait.example.com' })
    expect(second.status).toBe(201)
    expect(second.body.data.registration.status).toBe('waitlisted')
    expect((await register(e.slug, { name: 'Third', email: 'third@wait.example.com' })).body.data.registration.status).toBe('waitlisted')
    // The counts the management answers carry (one and the list).
    expect((await t.request('GET', `/v1/spaces/${space}/events/${e.id}`, { token: viewer })).body.data).toMatchObject({ confirmed_count: 1, waitlisted_count: 2 })
    const listed = (await t.request('GET', `/v1/spaces/${space}/events?per_page=100`, { token: viewer })).body.data.find((x: { id: string }) => x.id === e.id)
    expect(listed).toMatchObject({ confirmed_count: 1, waitlisted_count: 2 })
    const waitMail = await mailTo('second@wait.example.com')
    expect(waitMail.mail.parsed.subject).toBe('You are on the waitlist: Bun meetup')
    // The waitlisted calendar file is tentative.
    const tentative = parseIcs((await t.request('GET', waitMail.ics)).text)
    expect(tentative.vevent.getFirstPropertyValue('status')).toBe('TENTATIVE')

    const { cancel } = await mailTo('first@wait.example.com')
    const c = await t.request('POST', cancel)
    expect(c.status).toBe(200)
    expect(c.body).toEqual({ data: { ok: true, status: 'cancelled' } })
    expect((await t.request('POST', cancel)).status).toBe(200) // idempotent
    const promoted = await mailTo('second@wait.example.com')
    expect(promoted.mail.parsed.subject).toBe('A spot opened up, you are in: Bun meetup')
    const regs = await t.request('GET', `/v1/spaces/${space}/events/${e.id}/registrations`, { token: admin })
    expect(regs.body.data.map((r: { status: string }) => r.status)).toEqual(['cancelled', 'confirmed', 'waitlisted'])
    expect(regs.body.data[1].promoted_at).toBeTruthy()
    // The first attendee may register again (their registration was cancelled): back in line.
    expect((await register(e.slug, { name: 'First', email: 'first@wait.example.com' })).body.data.registration.status).toBe('waitlisted')

    // An admin cancels the confirmed one: Third is promoted. Viewers and editors may not (the answer is a person's data).
    const secondId = regs.body.data[1].id
    expect((await t.request('POST', `/v1/spaces/${space}/events/${e.id}/registrations/${secondId}/cancel`, { token: viewer })).status).toBe(403)
    expect((await t.request('POST', `/v1/spaces/${space}/events/${e.id}/registrations/${secondId}/cancel`, { token: editor })).status).toBe(403)
    const ed = await t.request('POST', `/v1/spaces/${space}/events/${e.id}/registrations/${secondId}/cancel`, { token: admin })
    expect(ed.status).toBe(200)
    expect(ed.body.data.status).toBe('cancelled')
    expect((await mailTo('third@wait.example.com')).mail.parsed.subject).toBe('A spot opened up, you are in: Bun meetup')
    // More capacity promotes the rest of the line.
    await t.request('PUT', `/v1/spaces/${space}/events/${e.id}`, { token: editor, body: eventBody({ slug: e.slug, capacity: 5, waitlist: true }) })
    const after = await t.request('GET', `/v1/spaces/${space}/events/${e.id}`, { token: viewer })
    expect(after.body.data).toMatchObject({ confirmed_count: 2, waitlisted_count: 0 })

    // An unknown token, or one used under another event, is 404.
    expect((await t.request('POST', `/v1/cdn/${space}/events/${e.slug}/cancel/${'A'.repeat(43)}`)).status).toBe(404)
    const other = await createEvent()
    expect((await t.request('POST', cancel.replace(`/events/${e.slug}/`, `/events/${other.slug}/`))).status).toBe(404)
  })

  test('without a waitlist, a cancellation frees the spot', async () => {
    const e = await createEvent({ capacity: 1 })
    expect((await register(e.slug, { name: 'A', email: 'a@free.example.com' })).status).toBe(201)
    expect((await register(e.slug, { name: 'B', email: 'b@free.example.com' })).body.error).toBe('event_full')
    const { cancel } = await mailTo('a@free.example.com')
    expect((await t.request('POST', cancel)).status).toBe(200)
    expect((await register(e.slug, { name: 'B', email: 'b@free.example.com' })).status).toBe(201)
  })
})

describe('calendar file and export', () => {
  test('the ICS parses (ical.js): TZID with VTIMEZONE, stable UID, SEQUENCE bumped by a change', async () => {
    const start = Date.parse('2027-03-28T00:30:00Z') // the night Berlin moves to summer time
    const e = await createEvent({ starts_at: iso(start), ends_at: iso(start + 3 * HOUR), capacity: 5 })
    const r = await register(e.slug, { name: 'Cal', email: 'cal@example.com', lang: 'de' })
    const path = new URL(r.body.data.ics_url).pathname
    const res = await t.request('GET', path)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/calendar; charset=utf-8')
    const { comp, vevent, event } = parseIcs(res.text)
    expect(comp.getAllSubcomponents('vtimezone').map((v) => v.getFirstPropertyValue('tzid'))).toEqual(['Europe/Berlin'])
    expect(vevent.getFirstProperty('dtstart')!.getParameter('tzid')).toBe('Europe/Berlin')
    expect(event.startDate.toJSDate().toISOString()).toBe(iso(start))
    expect(event.endDate.toJSDate().toISOString()).toBe(iso(start + 3 * HOUR))
    expect(event.summary).toBe('Bun-Treffen')
    expect(event.description).toBe('Vorträge und Pizza')
    expect(event.location).toBe('Hall A, Main St 1, Berlin')
    expect(vevent.getFirstPropertyValue('url')).toBe(`https://cms.example.com/v1/cdn/${space}/events/${e.slug}`)
    expect(event.sequence).toBe(0)
    expect(vevent.getFirstPropertyValue('status')).toBe('CONFIRMED')
    const uid = event.uid
    expect((await t.request('GET', path, { headers: { 'If-None-Match': res.headers.get('etag')! } })).status).toBe(304)
    expect((await t.request('GET', `${path}.ics`)).status).toBe(200)

    await t.request('PUT', `/v1/spaces/${space}/events/${e.id}`, { token: editor, body: eventBody({ slug: e.slug, starts_at: iso(start + DAY), ends_at: iso(start + DAY + HOUR), capacity: 5 }) })
    const changed = parseIcs((await t.request('GET', path)).text).event
    expect(changed.uid).toBe(uid)
    expect(changed.sequence).toBe(1)
    expect(changed.startDate.toJSDate().toISOString()).toBe(iso(start + DAY))

    expect((await t.request('GET', `/v1/cdn/${space}/events/${e.slug}/ics/${'b'.repeat(43)}`)).status).toBe(404)
    expect((await t.request('GET', `/v1/cdn/${space}/events/${e.slug}/ics/short`)).status).toBe(404)
    const other = (await t.createSpace(admin)).slug
    expect((await t.request('GET', path.replace(`/cdn/${space}/`, `/cdn/${other}/`))).status).toBe(404)
  })

  test('the editor’s calendar file of an event (unpublished too): the same UID as a registration’s; another Space → 404', async () => {
    const e = await createEvent({ published: false })
    const res = await t.request('GET', `/v1/spaces/${space}/events/${e.id}/event.ics`, { token: viewer })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/calendar; charset=utf-8')
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${e.slug}.ics"`)
    const { vevent, event } = parseIcs(res.text)
    expect(event.summary).toBe('Bun meetup')
    expect(event.uid).toBe(`${e.id}@cms.example.com`)
    expect(vevent.getFirstPropertyValue('status')).toBe('CONFIRMED')
    expect(vevent.getFirstProperty('dtstart')!.getParameter('tzid')).toBe('Europe/Berlin')
    expect((await t.request('GET', `/v1/spaces/${space}/events/${e.id}/event.ics`, { token: stranger })).status).toBe(404)
    expect((await t.request('GET', `/v1/spaces/${space}/events/${crypto.randomUUID()}/event.ics`, { token: viewer })).status).toBe(404)
  })

  test('CSV export: BOM, RFC 4180 quoting, formula guard, extra field columns', async () => {
    const e = await createEvent({ fields: { type: 'object', properties: { company: { type: 'string' } } } })
    await register(e.slug, { name: '=HYPERLINK("http://evil")', email: 'csv1@example.com', fields: { company: 'Acme, "Inc"' } })
    await register(e.slug, { name: 'Plain', email: 'csv2@example.com', fields: { company: '+1 formula' } })
    const csv = (token: string) => t.app.handle(new Request(`http://localhost/v1/spaces/${space}/events/${e.id}/registrations.csv`, { headers: { Authorization: `Bearer ${token}` } }))
    for (const token of [viewer, editor]) expect((await csv(token)).status).toBe(403)
    const res = await csv(admin)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(res.headers.get('content-disposition')).toContain(`${e.slug}-registrations.csv`)
    const bytes = new Uint8Array(await res.arrayBuffer())
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    const lines = new TextDecoder().decode(bytes.slice(3)).split('\r\n')
    expect(lines[0]).toBe('id,status,name,email,lang,registered_at,promoted_at,cancelled_at,company')
    expect(lines[1]).toContain(`"'=HYPERLINK(""http://evil"")"`)
    expect(lines[1]).toContain('"Acme, ""Inc"""')
    expect(lines[2]).toContain("'+1 formula")
    expect(lines).toHaveLength(4) // header, two rows, the trailing CRLF
    expect((await t.request('GET', `/v1/spaces/${space}/events/${e.id}/registrations.csv`, { token: stranger })).status).toBe(404)
  })
})

describe('webhooks', () => {
  test('event.registered and event.registration_cancelled reach a subscribed webhook with their bodies', async () => {
    const receiver = startReceiver()
    try {
      await t.kernel.jobs.runDueJobs() // earlier tests' events are relayed before the subscription exists
      const hook = await t.request('POST', `/v1/spaces/${space}/webhooks`, {
        token: admin,
        body: { label: 'Events', url: `${receiver.url}/in`, events: ['event.registered', 'event.registration_cancelled'], active: true },
      })
      expect(hook.status).toBe(201)
      const e = await createEvent({ capacity: 1, waitlist: true })
      await register(e.slug, { name: 'Hook One', email: 'hook1@example.com' })
      await register(e.slug, { name: 'Hook Two', email: 'hook2@example.com' })
      const { cancel } = await mailTo('hook1@example.com')
      await t.request('POST', cancel)
      await t.kernel.jobs.runDueJobs()
      const got = await receiver.waitFor(4)
      // Deliveries run concurrently: put them back in the order of the changes.
      const order = (b: any) => ['hook1@example.com:confirmed', 'hook2@example.com:waitlisted', 'hook1@example.com:cancelled', 'hook2@example.com:confirmed'].indexOf(`${b.registration.email}:${b.registration.status}`)
      const bodies = got.map((r) => r.json).sort((a, b) => order(a) - order(b))
      expect(got).toHaveLength(4)
      expect(bodies.map((b) => [b.event, b.registration.email, b.registration.status])).toEqual([
        ['event.registered', 'hook1@example.com', 'confirmed'],
        ['event.registered', 'hook2@example.com', 'waitlisted'],
        ['event.registration_cancelled', 'hook1@example.com', 'cancelled'],
        ['event.registered', 'hook2@example.com', 'confirmed'],
      ])
      expect(bodies[0].calendar_event).toMatchObject({ id: e.id, slug: e.slug, timezone: 'Europe/Berlin' })
      expect(bodies[2].by).toBe('attendee')
      expect(bodies[3].promoted).toBe(true)
      expect(JSON.stringify(bodies[0])).toContain(e.slug)
      expect(JSON.stringify(bodies)).not.toContain('"event_id"')
    } finally {
      await receiver.stop()
    }
  })
})
