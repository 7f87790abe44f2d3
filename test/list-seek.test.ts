// The public product and event lists page by keyset once a client pages on (ListSeek) and take their totals from memory:
// the answers must be the ones OFFSET and count(*) give — after changes, after time moves past an event's end, and on
// every page. Each expectation below is the plain sorted list cut into pages.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { commerceModule } from '../src/modules/commerce'
import { eventsModule } from '../src/modules/events'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(120_000)

const HOUR = 3_600_000
const DAY = 24 * HOUR

let t: TestApp
let owner: string
let space: string

beforeAll(async () => {
  t = await testApp()
  owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en' })).slug
}, 180_000)

afterAll(async () => {
  await t?.close()
})

const api = (method: string, path: string, body?: unknown) => t.request(method, `/v1/spaces/${space}${path}`, { token: owner, body })
const cdn = (path: string) => t.request('GET', `/v1/cdn/${space}${path}`)
const pages = <T>(all: T[], perPage: number) => Array.from({ length: Math.ceil(all.length / perPage) }, (_, i) => all.slice(i * perPage, (i + 1) * perPage))

describe('public products', () => {
  const product = async (slug: string, fields: Record<string, unknown> = {}) => {
    const r = await api('POST', '/products', { slug, name: { en: `Name ${slug}` }, price: 100, currency: 'EUR', stock: null, ...fields })
    expect(r.status).toBe(201)
    return r.body.data as { id: string }
  }
  const page = async (n: number, perPage = 3, q = '') => {
    const r = await cdn(`/products?page=${n}&per_page=${perPage}${q ? `&q=${q}` : ''}`)
    expect(r.status).toBe(200)
    return { slugs: (r.body.data as { slug: string }[]).map((p) => p.slug), meta: r.body.meta }
  }
  const expectPages = async (all: string[], perPage = 3, q = '') => {
    const want = pages(all, perPage)
    for (let i = 0; i < want.length + 1; i++) {
      expect(await page(i + 1, perPage, q)).toEqual({ slugs: want[i] ?? [], meta: { total: all.length, page: i + 1, per_page: perPage } })
    }
  }

  test('paging on, after changes and with a filter answers what OFFSET and count(*) answer', async () => {
    const slugs = ['b1', 'b2', 'c1', 'c2', 'd1', 'd2', 'e1', 'f1']
    const ids: Record<string, string> = {}
    for (const s of slugs) ids[s] = (await product(s)).id
    await product('z-hidden', { active: false })
    await expectPages(slugs)
    // Remembered now: the boundaries and the total are used, and give the same pages again.
    expect(t.state(commerceModule).listSeek.cache.stats.entries).toBeGreaterThan(0)
    await expectPages(slugs)
    // A new product sorting first shifts every page; deactivating one removes it.
    await product('a1')
    await expectPages(['a1', ...slugs])
    const patch = await api('PATCH', `/products/${ids.d1}`, { active: false })
    expect(patch.status).toBe(200)
    await expectPages(['a1', ...slugs.filter((s) => s !== 'd1')])
    // Another page size and a filter are lists of their own.
    await expectPages(['a1', ...slugs.filter((s) => s !== 'd1')], 2)
    await expectPages(['c1', 'c2'], 1, 'c')
    // Paging out of order (no boundary known) is the same answer.
    const all = ['a1', ...slugs.filter((s) => s !== 'd1')]
    expect((await page(3, 4)).slugs).toEqual(all.slice(8, 12))
    expect((await page(2, 4)).slugs).toEqual(all.slice(4, 8))
  })
})

describe('public events', () => {
  let n = 0
  const bodies: Record<string, Record<string, unknown>> = {}
  const ids: Record<string, string> = {}
  const event = async (startInHours: number, lengthHours: number) => {
    n++
    const start = t.clock.ms() + startInHours * HOUR
    const body = {
      slug: `ev-${n}`,
      title: { en: `Event ${n}` },
      description: { en: 'Talks' },
      starts_at: new Date(start).toISOString(),
      ends_at: new Date(start + lengthHours * HOUR).toISOString(),
      timezone: 'Europe/Berlin',
      location: { name: 'Hall A', address: 'Main St 1, Berlin', url: 'https://venue.example.com' },
      capacity: null,
      published: true,
    }
    const r = await api('POST', '/events', body)
    expect(r.status).toBe(201)
    bodies[`ev-${n}`] = body
    ids[`ev-${n}`] = r.body.data.id
    return `ev-${n}`
  }
  const page = async (p: number, perPage = 2, extra = '') => {
    const r = await cdn(`/events?page=${p}&per_page=${perPage}${extra}`)
    expect(r.status).toBe(200)
    return { slugs: (r.body.data as { slug: string }[]).map((e) => e.slug), meta: r.body.meta }
  }
  const expectPages = async (all: string[], perPage = 2, extra = '') => {
    const want = pages(all, perPage)
    for (let i = 0; i < want.length + 1; i++) {
      expect(await page(i + 1, perPage, extra)).toEqual({ slugs: want[i] ?? [], meta: { total: all.length, page: i + 1, per_page: perPage } })
    }
  }

  test('upcoming events page on by keyset, and an event that ends while time moves leaves the pages at once', async () => {
    // Soonest first: a long one that started yesterday and ends in 3 hours, then starts in 1 (ends in 2), 2 and 2 (a tie:
    // by id; they end in 7), 5 hours.
    const long = await event(-24, 27)
    const e1 = await event(1, 1)
    const e2a = await event(2, 5)
    const e2b = await event(2, 5)
    const e5 = await event(5, 1)
    await expectPages([long, e1, e2a, e2b, e5])
    expect(t.state(eventsModule).listSeek.cache.stats.entries).toBeGreaterThan(0)
    await expectPages([long, e1, e2a, e2b, e5])
    // Half a minute before e1 ends (at +2 h) it is still listed; the pages are remembered again.
    t.clock.advance(2 * HOUR - 30_000)
    await expectPages([long, e1, e2a, e2b, e5])
    await expectPages([long, e1, e2a, e2b, e5])
    // A minute later — no change of the Space, only time, and well inside the memory's expiry — e1 has ended: it
    // leaves every page and the total drops.
    t.clock.advance(40_000)
    await expectPages([long, e2a, e2b, e5])
    // The same for the long one, which sorted first (it ends at +3 h).
    t.clock.advance(HOUR - 20_000)
    await expectPages([long, e2a, e2b, e5])
    t.clock.advance(20_000)
    await expectPages([e2a, e2b, e5])
    t.clock.advance(30 * 60_000)
    // An explicit window is a list of its own; an unpublished event leaves it.
    const to = new Date(t.clock.ms() + 10 * HOUR).toISOString()
    await expectPages([e2a, e2b, e5], 1, `&to=${encodeURIComponent(to)}`)
    const later = await event(1, 1)
    await expectPages([e2a, e2b, later, e5], 1, `&to=${encodeURIComponent(to)}`)
    await expectPages([e2a, e2b, later, e5])
    expect((await api('PUT', `/events/${ids[e2b]}`, { ...bodies[e2b], published: false })).status).toBe(200)
    await expectPages([e2a, later, e5])
  })
})
