/**
 * One rule for `?lang` on every public read (issue 43 item 22): a BCP-47 tag picks the locale chain, anything else is
 * 422 `validation_failed` naming `lang` — Stories, the Story list, products, events, galleries, search, the overlay
 * read and the segment check alike; never a silent fallback to the default locale on some routes only.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { langParam, publicLocaleChain } from '../src/kernel/locale'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

let t: TestApp
let space: string
const routes: string[] = []

beforeAll(async () => {
  t = await testApp()
  const owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })).slug
  const ok = async (r: Promise<{ status: number; text: string }>) => {
    const res = await r
    if (res.status >= 300) throw new Error(`${res.status} ${res.text}`)
    return res
  }
  await ok(t.request('POST', `/v1/spaces/${space}/components`, { token: owner, body: { name: 'hero', is_root: true, schema: { headline: { type: 'text' } } } }))
  const s = await ok(t.request('POST', `/v1/spaces/${space}/stories`, { token: owner, body: { name: 'Home', slug: 'home', content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: 'Hi' }] } } }))
  await ok(t.request('POST', `/v1/spaces/${space}/stories/${(s as any).body.data.uuid}/publish`, { token: owner }))
  await ok(t.request('POST', `/v1/spaces/${space}/products`, { token: owner, body: { slug: 'mug', name: { en: 'Mug', de: 'Tasse' }, price: 100, currency: 'EUR', stock: 5 } }))
  const start = t.clock.ms() + 7 * 86_400_000
  await ok(
    t.request('POST', `/v1/spaces/${space}/events`, {
      token: owner,
      body: { slug: 'meetup', title: { en: 'Meetup', de: 'Treffen' }, starts_at: new Date(start).toISOString(), ends_at: new Date(start + 3_600_000).toISOString(), timezone: 'Europe/Berlin', location: { name: 'Hall' }, published: true },
    }),
  )
  await ok(t.request('POST', `/v1/spaces/${space}/galleries`, { token: owner, body: { slug: 'summer', title: { en: 'Summer' }, items: [] } }))
  routes.push(
    `/v1/cdn/${space}/stories/home`,
    `/v1/cdn/${space}/stories?starts_with=`,
    `/v1/cdn/${space}/products`,
    `/v1/cdn/${space}/products/mug`,
    `/v1/cdn/${space}/events`,
    `/v1/cdn/${space}/events/meetup`,
    `/v1/cdn/${space}/galleries/summer`,
    `/v1/cdn/${space}/search?q=hi`,
    `/v1/cdn/${space}/segment`,
  )
})

afterAll(async () => {
  await t?.close()
})

test('every public read that takes lang answers 200 for a tag and 422 naming lang for anything else', async () => {
  for (const path of routes) {
    const sep = path.includes('?') ? '&' : '?'
    const good = await t.request('GET', `${path}${sep}lang=de`)
    expect({ path, status: good.status }).toEqual({ path, status: 200 })
    for (const bad of ['!!', '', 'x'.repeat(36), 'de_DE', '%00']) {
      const r = await t.request('GET', `${path}${sep}lang=${bad}`)
      expect({ path, bad, status: r.status, error: r.body.error, field: Object.keys(r.body.errors ?? {}) }).toEqual({ path, bad, status: 422, error: 'validation_failed', field: ['lang'] })
    }
  }
})

test('the shared rule: absent is no choice, a tag is canonicalised, anything else is refused', () => {
  expect(langParam(undefined)).toBeUndefined()
  expect(langParam(null)).toBeUndefined()
  expect(langParam('de-at')).toBe('de-AT')
  for (const bad of ['!!', '', ' de', 'de_DE']) expect(() => langParam(bad)).toThrow()
  const space = { codes: ['en', 'de'], fallbacks: new Map<string, string>(), defaultLang: 'en' }
  expect(publicLocaleChain(space, 'de', null)).toEqual(['de', 'en'])
  expect(publicLocaleChain(space, undefined, 'de-CH, en;q=0.5')).toEqual(['de', 'en'])
  expect(() => publicLocaleChain(space, '!!', null)).toThrow()
})
