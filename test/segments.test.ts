import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { rateLimitRules } from '../src/app'
import { segmentsModule } from '../src/modules/segments'
import { compileRule, MAX_SIGNAL_LENGTH, REGEX_BUDGET, RequestSignals, ruleMatches } from '../src/modules/segments/rules'
import { type TestApp, testApp } from './helpers/app'
import { cpuTimer } from './helpers/cpu'

setDefaultTimeout(60_000)

let t: TestApp
let owner: { token: string; tenant: { id: number } }
let admin: string
let editor: string
let viewer: string
let space: string
let spaceId: number
let other: string

const hero = (uid: string, headline: string) => ({ component: 'hero', _uid: uid, headline })
const doc = (...blocks: unknown[]) => ({ type: 'doc', blocks })

/** A second person in the owner's tenant with a role in the Space (no membership API yet: the database). */
const member = (role: 'viewer' | 'editor' | 'admin') => t.member(owner.tenant.id, space, role)

const segs = (s = space) => `/v1/spaces/${s}/audience-segments`
const createSegment = (body: Record<string, unknown>, s = space, token = editor) => t.request('POST', segs(s), { token, body })
async function segmentOk(body: Record<string, unknown>, s = space) {
  const r = await createSegment({ label: String(body.key), priority: 0, ...(body.rules ? {} : { rules: [], match_all: true }), ...body }, s, admin)
  if (r.status !== 201) throw new Error(`segment: ${r.status} ${r.text}`)
  return r.body.data as { id: number; key: string }
}
const patchSegment = (idOrKey: string | number, body: Record<string, unknown>, s = space) =>
  t.request('PATCH', `${segs(s)}/${idOrKey}`, { token: editor, body })
const deleteSegment = (idOrKey: string | number, s = space) => t.request('DELETE', `${segs(s)}/${idOrKey}`, { token: editor })

async function storyOk(slug: string, headline: string, s = space) {
  const r = await t.request('POST', `/v1/spaces/${s}/stories`, { token: editor, body: { name: slug, slug, content: doc(hero('h', headline)) } })
  if (r.status !== 201) throw new Error(`story: ${r.status} ${r.text}`)
  return r.body.data as { uuid: string; id: number }
}
const publish = (uuid: string, s = space) => t.request('POST', `/v1/spaces/${s}/stories/${uuid}/publish`, { token: editor })
const variants = (uuid: string, s = space) => `/v1/spaces/${s}/stories/${uuid}/variants`
const addVariant = (uuid: string, body: Record<string, unknown>, s = space, token = editor) => t.request('POST', variants(uuid, s), { token, body })

const resolveSegment = (query = '', headers: Record<string, string> = {}, s = space) =>
  t.request('GET', `/v1/cdn/${s}/segment${query}`, { headers })
const cdn = (path: string, headers: Record<string, string> = {}, s = space) => t.request('GET', `/v1/cdn/${s}/stories/${path}`, { headers })
const headlineOf = (r: { body: any }) => r.body.data.content.blocks[0].headline as string

beforeAll(async () => {
  t = await testApp()
  owner = await t.register()
  admin = owner.token
  const sp = await t.createSpace(admin, { default_lang: 'en', locales: ['en', 'de'] })
  space = sp.slug
  other = (await t.createSpace(admin)).slug
  const [row] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [space])
  spaceId = row.id
  editor = await member('editor')
  viewer = await member('viewer')
  for (const s of [space, other]) {
    const c = await t.request('POST', `/v1/spaces/${s}/components`, { token: admin, body: { name: 'hero', is_root: true, schema: { headline: { type: 'text' } } } })
    expect(c.status).toBe(201)
  }
})

afterAll(async () => {
  await t?.close()
})

describe('segment management', () => {
  test('create, read by id and by key, PUT replaces, PATCH merges, DELETE; the listing by priority then id', async () => {
    const s = await t.createSpace(admin)
    const a = await createSegment({ key: 'beta', label: 'Beta', priority: 5, rules: [{ type: 'query', key: 'ref', operator: 'eq', value: 'x' }] }, s.slug, admin)
    expect(a.status).toBe(201)
    expect(a.body.data).toMatchObject({ key: 'beta', label: 'Beta', priority: 5, active: true, rules: [{ type: 'query', key: 'ref', operator: 'eq', value: 'x' }] })
    const b = (await createSegment({ key: 'alpha', label: 'Alpha', priority: 5, active: false, rules: [], match_all: true }, s.slug, admin)).body.data
    const c = (await createSegment({ key: 'gamma', label: 'Gamma', priority: -1, rules: [], match_all: true }, s.slug, admin)).body.data
    const list = await t.request('GET', segs(s.slug), { token: admin })
    expect(list.status).toBe(200)
    expect(list.body.data.map((x: { key: string }) => x.key)).toEqual(['gamma', 'beta', 'alpha'])

    expect((await t.request('GET', `${segs(s.slug)}/${b.id}`, { token: admin })).body.data.key).toBe('alpha')
    expect((await t.request('GET', `${segs(s.slug)}/alpha`, { token: admin })).body.data.id).toBe(b.id)
    expect((await t.request('GET', `${segs(s.slug)}/nope`, { token: admin })).status).toBe(404)
    expect((await t.request('GET', `${segs(s.slug)}/99999999999`, { token: admin })).status).toBe(404)
    expect((await t.request('GET', `${segs(s.slug)}/Bad Key!`, { token: admin })).status).toBe(404)

    const put = await t.request('PUT', `${segs(s.slug)}/alpha`, { token: admin, body: { key: 'alpha2', label: 'A2', priority: 1, rules: [], match_all: true } })
    expect(put.status).toBe(200)
    expect(put.body.data).toMatchObject({ id: b.id, key: 'alpha2', label: 'A2', priority: 1, active: true, rules: [], match_all: true })
    const putMissing = await t.request('PUT', `${segs(s.slug)}/${b.id}`, { token: admin, body: { label: 'only a label' } })
    expect(putMissing.status).toBe(422)

    const patch = await t.request('PATCH', `${segs(s.slug)}/${c.id}`, { token: admin, body: { active: false } })
    expect(patch.status).toBe(200)
    expect(patch.body.data).toMatchObject({ key: 'gamma', label: 'Gamma', priority: -1, active: false })

    const dup = await t.request('PATCH', `${segs(s.slug)}/${c.id}`, { token: admin, body: { key: 'beta' } })
    expect({ status: dup.status, error: dup.body.error }).toEqual({ status: 409, error: 'conflict' })
    const dup2 = await createSegment({ key: 'beta', label: 'again', priority: 0, rules: [], match_all: true }, s.slug, admin)
    expect({ status: dup2.status, error: dup2.body.error }).toEqual({ status: 409, error: 'conflict' })
    // The same key in another Space is fine.
    expect((await createSegment({ key: 'beta', label: 'elsewhere', priority: 0, rules: [], match_all: true }, other, admin)).status).toBe(201)

    expect((await t.request('DELETE', `${segs(s.slug)}/beta`, { token: admin })).status).toBe(204)
    expect((await t.request('DELETE', `${segs(s.slug)}/beta`, { token: admin })).status).toBe(404)
    expect((await t.request('GET', segs(s.slug), { token: admin })).body.data.map((x: { key: string }) => x.key)).toEqual(['gamma', 'alpha2'])
  })

  test('each field and rule is validated (422 keyed by the field)', async () => {
    const rule = (r: Record<string, unknown>) => ({ key: 'valid', label: 'L', priority: 0, rules: [r] })
    const cases: [Record<string, unknown>, string][] = [
      [{ key: 'Upper', label: 'L', priority: 0, rules: [] }, 'key'],
      [{ key: '1abc', label: 'L', priority: 0, rules: [] }, 'key'],
      [{ key: `a${'b'.repeat(64)}`, label: 'L', priority: 0, rules: [] }, 'key'],
      [{ key: 'ok', label: '', priority: 0, rules: [] }, 'label'],
      [{ key: 'ok', label: 'L', priority: 1.5, rules: [] }, 'priority'],
      [{ key: 'ok', label: 'L', rules: [] }, 'priority'],
      [rule({ type: 'planet', operator: 'eq', value: 'x' }), 'rules/0/type'],
      [rule({ type: 'country', operator: 'like', value: 'x' }), 'rules/0/operator'],
      [rule({ type: 'country', operator: 'in', value: 'de' }), 'rules/0/value'],
      [rule({ type: 'country', operator: 'not_in', value: [] }), 'rules/0/value'],
      [rule({ type: 'country', operator: 'in', value: Array.from({ length: 51 }, (_, i) => `c${i}`) }), 'rules/0/value'],
      [rule({ type: 'country', operator: 'eq', value: ['de'] }), 'rules/0/value'],
      [rule({ type: 'country', operator: 'eq', value: 3 }), 'rules/0/value'],
      [rule({ type: 'cookie', operator: 'eq', value: 'x' }), 'rules/0/key'],
      [rule({ type: 'query', operator: 'eq', value: 'x', key: '' }), 'rules/0/key'],
      [rule({ type: 'country', operator: 'eq', value: 'x', key: 'k' }), 'rules/0/key'],
      [rule({ type: 'referrer', operator: 'regex', value: '(a' }), 'rules/0/value'],
      [rule({ type: 'referrer', operator: 'regex', value: '(?<=a)b' }), 'rules/0/value'],
      [rule({ type: 'referrer', operator: 'regex', value: 'a'.repeat(201) }), 'rules/0/value'],
      [rule({ type: 'referrer', operator: 'regex', value: '.{1000}' }), 'rules/0/value'],
      [rule({ type: 'referrer', operator: 'regex', value: '(a{1000}){1000}' }), 'rules/0/value'],
      [{ key: 'ok', label: 'L', priority: 0, rules: Array.from({ length: 21 }, () => ({ type: 'country', operator: 'eq', value: 'de' })) }, 'rules'],
      [{ key: 'ok', label: 'L', priority: 0, rules: [], extra: 1 }, 'extra'],
    ]
    for (const [body, field] of cases) {
      const r = await createSegment(body)
      expect({ body, status: r.status, error: r.body.error }).toEqual({ body, status: 422, error: 'validation_failed' })
      expect({ body, fields: Object.keys(r.body.errors ?? {}).some((k) => k === field || k.startsWith(`${field}/`)) }).toEqual({ body, fields: true })
    }
    const bad = await createSegment(rule({ type: 'referrer', operator: 'regex', value: '(a' }))
    expect(bad.body.errors['rules/0/value'][0]).toContain('missing closing )')
    const complex = await createSegment(rule({ type: 'referrer', operator: 'regex', value: 'x.{400}' }))
    expect(complex.body.errors['rules/0/value'][0]).toContain('too complex')
    // 20 rules and a 200-character regex are fine.
    const twenty = await createSegment({ key: 'twenty', label: 'L', priority: 0, rules: Array.from({ length: 20 }, () => ({ type: 'country', operator: 'eq', value: 'de' })) })
    expect(twenty.status).toBe(201)
    const long = await createSegment(rule({ type: 'referrer', operator: 'regex', value: 'a'.repeat(200) }))
    expect(long.status).toBe(201)
    await deleteSegment('twenty')
    await deleteSegment('valid')
  })

  test('at most 100 segments per Space', async () => {
    const s = (await t.createSpace(admin)).slug
    for (let i = 0; i < 100; i++) expect((await createSegment({ key: `s${i}`, label: 'L', priority: i, rules: [], match_all: true }, s, admin)).status).toBe(201)
    const r = await createSegment({ key: 'one-too-many', label: 'L', priority: 0, rules: [], match_all: true }, s, admin)
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 409, error: 'segment_limit' })
    // Spec 4.8: creating segments is limited to 60 per minute per IP.
    expect(rateLimitRules().find((x) => x.method === 'POST' && x.path === '/v1/spaces/:space/audience-segments')).toMatchObject({ limit: 60, windowSeconds: 60 })
    const statuses: number[] = []
    for (let i = 0; i < 61; i++) statuses.push((await t.request('POST', segs(s), { token: admin, ip: '10.251.0.1', body: { key: 'x' } })).status)
    expect(statuses.slice(0, 60).every((x) => x === 422)).toBe(true)
    expect(statuses[60]).toBe(429)
  })

  test('viewers read, only editors write (403); another Space’s segment is 404', async () => {
    const a = await segmentOk({ key: 'roles' })
    expect((await t.request('GET', segs(), { token: viewer })).status).toBe(200)
    expect((await t.request('GET', `${segs()}/roles`, { token: viewer })).status).toBe(200)
    expect((await createSegment({ key: 'byviewer', label: 'L', priority: 0, rules: [] }, space, viewer)).status).toBe(403)
    expect((await t.request('PATCH', `${segs()}/roles`, { token: viewer, body: { label: 'x' } })).status).toBe(403)
    expect((await t.request('PUT', `${segs()}/roles`, { token: viewer, body: { key: 'roles', label: 'x', priority: 0, rules: [] } })).status).toBe(403)
    expect((await t.request('DELETE', `${segs()}/roles`, { token: viewer })).status).toBe(403)
    expect((await t.request('GET', segs(), {})).status).toBe(401)
    // The id exists, but in another Space.
    expect((await t.request('GET', `${segs(other)}/${a.id}`, { token: admin })).status).toBe(404)
    expect((await t.request('PATCH', `${segs(other)}/${a.id}`, { token: admin, body: { label: 'x' } })).status).toBe(404)
    expect((await t.request('DELETE', `${segs(other)}/${a.id}`, { token: admin })).status).toBe(404)
    await deleteSegment('roles')
  })
})

describe('checking rules without saving', () => {
  test('check-rules answers the messages a save would refuse with, keyed rules/<i>/<field>; saves nothing', async () => {
    const check = (rules: unknown[], token = viewer) => t.request('POST', `${segs()}/check-rules`, { token, body: { rules } })
    const before = (await t.request('GET', segs(), { token: viewer })).body.data.length
    const ok = await check([{ type: 'referrer', operator: 'regex', value: '^https://(www\\.)?example\\.com/' }, { type: 'cookie', key: 'plan', operator: 'in', value: ['pro', 'team'] }])
    expect(ok.status).toBe(200)
    expect(ok.body.data).toEqual({ valid: true, errors: {} })
    const bad = await check([
      { type: 'referrer', operator: 'regex', value: '(unclosed' },
      { type: 'query', operator: 'eq', value: 'x' },
      { type: 'language', operator: 'in', value: 'de' },
      { type: 'country', operator: 'eq', value: 'DE', key: 'nope' },
    ])
    expect(bad.status).toBe(200)
    expect(bad.body.data.valid).toBe(false)
    expect(Object.keys(bad.body.data.errors).sort()).toEqual(['rules/0/value', 'rules/1/key', 'rules/2/value', 'rules/3/key'])
    // The same rules in a save: the same keys in a 422.
    const saved = await createSegment({ key: 'checked', label: 'x', priority: 1, rules: [{ type: 'referrer', operator: 'regex', value: '(unclosed' }] })
    expect(saved.status).toBe(422)
    expect(saved.body.errors['rules/0/value']).toEqual(bad.body.data.errors['rules/0/value'])
    expect((await t.request('GET', segs(), { token: viewer })).body.data.length).toBe(before)
    expect((await check([{ type: 'nope', operator: 'eq', value: 'x' }])).status).toBe(422)
    expect((await t.request('POST', `/v1/spaces/${other}/audience-segments/check-rules`, { token: viewer, body: { rules: [] } })).status).toBe(404)
  })
})

describe('match_all and warnings', () => {
  const q = [{ type: 'query', key: 'p', operator: 'eq', value: '1' }]
  const fieldsOf = (r: { body: { errors?: Record<string, string[]> } }) => Object.keys(r.body.errors ?? {})

  test('rules: [] is refused (it would match every visitor) unless match_all: true says so', async () => {
    const empty = await createSegment({ key: 'everyone', label: 'E', priority: 0, rules: [] })
    expect({ status: empty.status, error: empty.body.error, fields: fieldsOf(empty) }).toEqual({ status: 422, error: 'validation_failed', fields: ['rules'] })
    const off = await createSegment({ key: 'everyone', label: 'E', priority: 0, rules: [], match_all: false })
    expect({ status: off.status, fields: fieldsOf(off) }).toEqual({ status: 422, fields: ['rules'] })
    // match_all with rules is a contradiction, not a guess.
    const both = await createSegment({ key: 'everyone', label: 'E', priority: 0, rules: q, match_all: true })
    expect({ status: both.status, fields: fieldsOf(both) }).toEqual({ status: 422, fields: ['match_all'] })
    expect((await t.request('GET', `${segs()}/everyone`, { token: admin })).status).toBe(404)

    const all = await createSegment({ key: 'everyone', label: 'E', priority: 900, rules: [], match_all: true })
    expect(all.status).toBe(201)
    expect(all.body.data).toMatchObject({ key: 'everyone', rules: [], match_all: true })
    expect((await t.request('GET', `${segs()}/everyone`, { token: admin })).body.data.match_all).toBe(true)
    const ruled = await createSegment({ key: 'ruled', label: 'R', priority: 901, rules: q })
    expect(ruled.body.data.match_all).toBe(false)

    // PATCH is checked on the merged result; PUT like a create.
    const emptied = await patchSegment('ruled', { rules: [] })
    expect({ status: emptied.status, fields: fieldsOf(emptied) }).toEqual({ status: 422, fields: ['rules'] })
    const unflagged = await patchSegment('everyone', { match_all: false })
    expect({ status: unflagged.status, fields: fieldsOf(unflagged) }).toEqual({ status: 422, fields: ['rules'] })
    const flagged = await patchSegment('ruled', { match_all: true })
    expect({ status: flagged.status, fields: fieldsOf(flagged) }).toEqual({ status: 422, fields: ['match_all'] })
    expect((await t.request('GET', `${segs()}/ruled`, { token: admin })).body.data).toMatchObject({ rules: q, match_all: false })
    const swapped = await patchSegment('ruled', { match_all: true, rules: [] })
    expect(swapped.status).toBe(200)
    expect(swapped.body.data).toMatchObject({ rules: [], match_all: true })
    const back = await patchSegment('ruled', { rules: q })
    expect({ status: back.status, fields: fieldsOf(back) }).toEqual({ status: 422, fields: ['match_all'] })
    expect((await patchSegment('ruled', { rules: q, match_all: false })).status).toBe(200)
    const put = await t.request('PUT', `${segs()}/everyone`, { token: editor, body: { key: 'everyone', label: 'E', priority: 900, rules: [] } })
    expect({ status: put.status, fields: fieldsOf(put) }).toEqual({ status: 422, fields: ['rules'] })

    await deleteSegment('everyone')
    await deleteSegment('ruled')
    // A match_all segment matches every visitor (in a Space of its own).
    const fresh = (await t.createSpace(admin)).slug
    expect((await resolveSegment('', {}, fresh)).body.data.segment).toBe(null)
    expect((await createSegment({ key: 'everyone', label: 'E', priority: 0, rules: [], match_all: true }, fresh, admin)).status).toBe(201)
    expect((await resolveSegment('', {}, fresh)).body.data.segment).toBe('everyone')
  })

  test('a country rule saved while no trusted proxy is configured: saved, with a warning that it never matches', async () => {
    const country = [{ type: 'country', operator: 'eq', value: 'de' }]
    // The test app trusts its loopback peer: no warning.
    const trusted = await createSegment({ key: 'geo-ok', label: 'G', priority: 910, rules: country })
    expect(trusted.status).toBe(201)
    expect(trusted.body.warnings).toEqual([])
    await deleteSegment('geo-ok')

    const untrusted = await t.instance({ trustedProxies: [] })
    try {
      const send = async (method: string, path: string, body: unknown) => {
        const res = await untrusted.runtime.handle(
          new Request(`http://localhost${path}`, {
            method,
            headers: { Authorization: `Bearer ${editor}`, 'Content-Type': 'application/json', 'X-Forwarded-For': '10.9.9.9' },
            body: JSON.stringify(body),
          }),
        )
        return { status: res.status, body: (await res.json()) as any }
      }
      const created = await send('POST', segs(), { key: 'geo', label: 'G', priority: 911, rules: [q[0], ...country] })
      expect(created.status).toBe(201)
      expect(created.body.data).toMatchObject({ key: 'geo', rules: [q[0], ...country] })
      expect(created.body.warnings).toEqual([{ code: 'country_rule_inactive', field: 'rules/1', message: expect.stringContaining('TRUSTED_PROXIES') }])
      const patched = await send('PATCH', `${segs()}/geo`, { label: 'Geo' })
      expect(patched.status).toBe(200)
      expect(patched.body.warnings.map((w: { field: string }) => w.field)).toEqual(['rules/1'])
      const put = await send('PUT', `${segs()}/geo`, { key: 'geo', label: 'G', priority: 911, rules: q })
      expect(put.status).toBe(200)
      expect(put.body.warnings).toEqual([])
    } finally {
      await untrusted.close()
    }
    await deleteSegment('geo')
  })
})

describe('resolution', () => {
  // One segment whose single rule is swapped per case; GET /cdn/{space}/segment answers what a Story read would pick.
  const SIGNAL: Record<string, (v: string) => { query?: string; headers?: Record<string, string> }> = {
    country: (v) => ({ headers: { 'CF-IPCountry': v } }),
    language: (v) => ({ headers: { 'Accept-Language': `${v}-XX;q=0.8` } }),
    referrer: (v) => ({ headers: { Referer: `https://${v}/some/page?x=1` } }),
    cookie: (v) => ({ headers: { Cookie: `other=1; k=${v}; z=2` } }),
    query: (v) => ({ query: `?k=${v}` }),
    utm_source: (v) => ({ query: `?utm_source=${v}` }),
    utm_campaign: (v) => ({ query: `?utm_campaign=${v}` }),
  }
  const OPERATORS: Record<string, { value: string | string[]; yes: string; no: string }> = {
    eq: { value: 'ALPHA', yes: 'alpha', no: 'beta' },
    neq: { value: 'alpha', yes: 'beta', no: 'Alpha' },
    in: { value: ['gamma', 'ALPHA'], yes: 'alpha', no: 'beta' },
    not_in: { value: ['alpha', 'gamma'], yes: 'beta', no: 'ALPHA' },
    contains: { value: 'LPH', yes: 'alpha', no: 'beta' },
    starts_with: { value: 'al', yes: 'ALPHA', no: 'beta' },
    regex: { value: '^a.p', yes: 'alpha', no: 'beta' },
  }

  test('every type × operator: a matching value, a non-matching value and an absent signal', async () => {
    const seg = await segmentOk({ key: 'matrix', rules: [{ type: 'query', key: 'k', operator: 'eq', value: 'first' }] })
    try {
      for (const type of Object.keys(SIGNAL)) {
        for (const [operator, c] of Object.entries(OPERATORS)) {
          const rule: Record<string, unknown> = { type, operator, value: c.value }
          if (type === 'cookie' || type === 'query') rule.key = 'k'
          expect((await patchSegment(seg.id, { rules: [rule] })).status).toBe(200)
          const ask = async (v: string | null) => {
            const s = v === null ? {} : SIGNAL[type](v)
            return (await resolveSegment(s.query, s.headers)).body.data.segment
          }
          const absentMatches = operator === 'neq' || operator === 'not_in'
          expect({ type, operator, yes: await ask(c.yes), no: await ask(c.no), absent: await ask(null) }).toEqual({
            type,
            operator,
            yes: 'matrix',
            no: null,
            absent: absentMatches ? 'matrix' : null,
          })
        }
      }
    } finally {
      await deleteSegment(seg.id)
    }
  })

  test('language reads every Accept-Language range with q > 0 and ?lang; utm falls back to the Referer URL', async () => {
    const seg = await segmentOk({ key: 'langs', rules: [{ type: 'language', operator: 'eq', value: 'fr' }] })
    expect((await resolveSegment('', { 'Accept-Language': 'de-DE, fr-CH;q=0.4' })).body.data.segment).toBe('langs')
    expect((await resolveSegment('', { 'Accept-Language': 'de-DE, fr-CH;q=0' })).body.data.segment).toBe(null)
    expect((await resolveSegment('?lang=fr-CA')).body.data.segment).toBe('langs')
    await patchSegment(seg.id, { rules: [{ type: 'utm_campaign', operator: 'eq', value: 'spring' }] })
    expect((await resolveSegment('', { Referer: 'https://news.example/?utm_campaign=Spring' })).body.data.segment).toBe('langs')
    // The request's own parameter wins over the Referer's.
    expect((await resolveSegment('?utm_campaign=autumn', { Referer: 'https://news.example/?utm_campaign=spring' })).body.data.segment).toBe(null)
    await deleteSegment(seg.id)
  })

  test('priority order, ties by id, inactive segments, and the X-Service-Segment short-cut', async () => {
    const any = [{ type: 'query', key: 'p', operator: 'eq', value: '1' }]
    const late = await segmentOk({ key: 'late', priority: 10, rules: any })
    const first = await segmentOk({ key: 'first', priority: 3, rules: any })
    const tie = await segmentOk({ key: 'tie', priority: 3, rules: any }) // same priority, higher id
    const off = await segmentOk({ key: 'off', priority: -5, rules: any, active: false })
    expect((await resolveSegment('?p=1')).body.data.segment).toBe('first')
    await patchSegment(first.id, { active: false })
    expect((await resolveSegment('?p=1')).body.data.segment).toBe('tie')
    await patchSegment(tie.id, { priority: 20 })
    expect((await resolveSegment('?p=1')).body.data.segment).toBe('late')
    await patchSegment(off.id, { active: true })
    expect((await resolveSegment('?p=1')).body.data.segment).toBe('off')

    // The header names an active segment: used without evaluating rules (they do not match here).
    expect((await resolveSegment('', { 'X-Service-Segment': 'late' })).body.data.segment).toBe('late')
    // An unknown or inactive key is ignored: the rules decide.
    expect((await resolveSegment('?p=1', { 'X-Service-Segment': 'nope' })).body.data.segment).toBe('off')
    expect((await resolveSegment('?p=1', { 'X-Service-Segment': 'first' })).body.data.segment).toBe('off')
    expect((await resolveSegment('', { 'X-Service-Segment': 'first' })).body.data.segment).toBe(null)
    for (const s of [late, first, tie, off]) await deleteSegment(s.id)
  })

  test('a country header counts only through a trusted proxy', async () => {
    const seg = await segmentOk({ key: 'german', rules: [{ type: 'country', operator: 'eq', value: 'de' }] })
    const neg = await segmentOk({ key: 'not-french', priority: 1, rules: [{ type: 'country', operator: 'neq', value: 'fr' }] })
    // The test app trusts its loopback peer as a proxy.
    expect((await resolveSegment('', { 'CF-IPCountry': 'DE' })).body.data.segment).toBe('german')
    expect((await resolveSegment('', { 'CF-IPCountry': 'US' })).body.data.segment).toBe('not-french')
    const untrusted = await t.instance({ trustedProxies: [] })
    const custom = await t.instance({ segmentCountryHeader: 'X-Geo-Country' })
    try {
      const ask = async (inst: typeof untrusted, headers: Record<string, string>) => (await inst.get(`/v1/cdn/${space}/segment`, headers)).body.data.segment
      // Not through a trusted proxy: country rules never match, not even neq.
      expect(await ask(untrusted, { 'CF-IPCountry': 'DE' })).toBe(null)
      expect(await ask(untrusted, { 'CF-IPCountry': 'US' })).toBe(null)
      // SEGMENT_COUNTRY_HEADER names the header.
      expect(await ask(custom, { 'X-Geo-Country': 'de' })).toBe('german')
      expect(await ask(custom, { 'CF-IPCountry': 'de' })).toBe('not-french') // absent: neq matches
      // Untrusted reads are resolved the same way on a Story read.
      const s = await storyOk('geo', 'default')
      await publish(s.uuid)
      const r = await untrusted.get(`/v1/cdn/${space}/stories/geo`, { 'CF-IPCountry': 'DE' })
      expect(r.body.meta.served_segment).toBe(null)
      expect(r.headers.get('x-service-segment')).toBe(null)
      expect(r.headers.get('cache-control')).toBe(`private, max-age=${t.config.cdnMaxAge}`)
      const trusted = await cdn('geo', { 'CF-IPCountry': 'DE' })
      expect(trusted.body.meta.served_segment).toBe('german')
      expect(trusted.headers.get('x-service-segment')).toBe('german')
      expect(trusted.headers.get('cache-control')).toBe(`private, max-age=${t.config.cdnMaxAge}`)
      // A 304 of a signal-resolved read stays private too.
      const nm = await cdn('geo', { 'CF-IPCountry': 'DE', 'If-None-Match': trusted.headers.get('etag')! })
      expect(nm.status).toBe(304)
      expect(nm.headers.get('cache-control')).toBe(`private, max-age=${t.config.cdnMaxAge}`)
    } finally {
      await untrusted.close()
      await custom.close()
      await deleteSegment(seg.id)
      await deleteSegment(neg.id)
    }
  })

  test('a catastrophic regex against 10,000 characters answers fast (linear-time engine)', async () => {
    const seg = await segmentOk({ key: 'redos', rules: [{ type: 'query', key: 'q', operator: 'regex', value: '(a+)+$' }] })
    const evil = await segmentOk({ key: 'evil', priority: 1, rules: [{ type: 'cookie', key: 'c', operator: 'regex', value: '^(a|a)*(a|aa)*c$' }] })
    // CPU time, not wall time: on a loaded machine a cheap request can wait for a core (test/helpers/cpu.ts).
    const cpu = cpuTimer()
    const r = await resolveSegment(`?q=${'a'.repeat(10_000)}!`)
    const r2 = await resolveSegment('', { Cookie: `c=${'a'.repeat(10_000)}b` })
    const elapsed = cpu.ms()
    expect(r.status).toBe(200)
    expect(r2.body.data.segment).toBe(null)
    expect(elapsed).toBeLessThan(1000)
    const s = await storyOk('redos', 'default')
    await publish(s.uuid)
    const readCpu = cpuTimer()
    const read = await cdn(`redos?q=${'a'.repeat(10_000)}`)
    expect(readCpu.ms()).toBeLessThan(1000)
    expect(read.body.meta.served_segment).toBe('redos')
    await deleteSegment(seg.id)
    await deleteSegment(evil.id)
  })

  test('regex work per request is bounded: values cut at 512 characters, a budget of characters × instructions', () => {
    const big = compileRule({ type: 'cookie', key: 'c', operator: 'regex', value: '[a-z]{290}$' })!
    expect(big.regexSize * MAX_SIGNAL_LENGTH).toBeLessThanOrEqual(REGEX_BUDGET)
    const request = new Request('http://localhost/', { headers: { cookie: `c=${'a'.repeat(5000)}` } })
    const signals = new RequestSignals(request, true, 'cf-ipcountry', undefined)
    expect(signals.one('cookie', 'c')!.length).toBe(MAX_SIGNAL_LENGTH)
    expect(ruleMatches(big, signals)).toBe(true)
    // The budget is spent: the same rule on the same request no longer matches; a new request has its own budget.
    expect(ruleMatches(big, signals)).toBe(false)
    expect(ruleMatches(compileRule({ type: 'cookie', key: 'c', operator: 'eq', value: 'a'.repeat(512) })!, signals)).toBe(true)
    expect(ruleMatches(big, new RequestSignals(request, true, 'cf-ipcountry', undefined))).toBe(true)
  })

  test('GET /cdn/{space}/segment: private, no-store; unknown Space 404; 600/min/IP', async () => {
    const r = await resolveSegment()
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ data: { segment: null } })
    expect(r.headers.get('cache-control')).toBe('private, no-store')
    expect((await resolveSegment('', {}, 'no-such-space')).status).toBe(404)
    expect(rateLimitRules().find((x) => x.path === '/v1/cdn/:space/segment')).toMatchObject({ limit: 600, windowSeconds: 60 })
    const ip = '10.250.1.1'
    for (let i = 0; i < 600; i++) {
      const ok = await t.request('GET', `/v1/cdn/${space}/segment`, { ip })
      if (ok.status !== 200) throw new Error(`request ${i}: ${ok.status}`)
    }
    const limited = await t.request('GET', `/v1/cdn/${space}/segment`, { ip })
    expect(limited.status).toBe(429)
    expect((await t.request('GET', `/v1/cdn/${space}/segment`, { ip: '10.250.1.2' })).status).toBe(200)
  })

  test('isSegmentKey answers from the in-memory cache (inactive segments count)', async () => {
    const seg = await segmentOk({ key: 'known', active: false })
    const state = t.state(segmentsModule)
    expect(await state.isSegmentKey(spaceId, 'known')).toBe(true)
    expect(await state.isSegmentKey(spaceId, 'unknown')).toBe(false)
    expect(state.isSegmentKey(spaceId, 'known')).toBe(true) // loaded now: synchronous
    await deleteSegment(seg.id)
    expect(await state.isSegmentKey(spaceId, 'known')).toBe(false)
  })
})

describe('variants', () => {
  test('create (lang defaults to the Space default), list, patch, delete; duplicates 409; locale and content validated', async () => {
    const seg = await segmentOk({ key: 'v-crud' })
    const s = await storyOk('v-crud', 'default')
    const created = await addVariant(s.uuid, { audience_segment_id: seg.id, content: doc(hero('h', 'for v-crud')) })
    expect(created.status).toBe(201)
    expect(created.body.data).toMatchObject({ story_uuid: s.uuid, audience_segment_id: seg.id, segment_key: 'v-crud', lang: 'en', content: doc(hero('h', 'for v-crud')) })
    const dup = await addVariant(s.uuid, { audience_segment_id: seg.id, content: doc(hero('h', 'again')), lang: 'en' })
    expect({ status: dup.status, error: dup.body.error }).toEqual({ status: 409, error: 'conflict' })
    const de = await addVariant(s.uuid, { audience_segment_id: seg.id, content: doc(hero('h', 'für v-crud')), lang: 'de' })
    expect(de.status).toBe(201)
    const list = await t.request('GET', variants(s.uuid), { token: viewer })
    expect(list.status).toBe(200)
    expect(list.body.data.map((v: { lang: string }) => v.lang)).toEqual(['de', 'en'])

    const badLang = await addVariant(s.uuid, { audience_segment_id: seg.id, content: doc(), lang: 'fr' })
    expect({ status: badLang.status, field: Object.keys(badLang.body.errors ?? {}) }).toEqual({ status: 422, field: ['lang'] })
    const badContent = await addVariant(s.uuid, { audience_segment_id: seg.id, content: doc({ component: 'nope', _uid: 'x' }), lang: 'de' })
    expect(badContent.status).toBe(422)
    expect(Object.keys(badContent.body.errors)).toEqual(['content/blocks/0/component'])
    const badField = await addVariant(s.uuid, { audience_segment_id: seg.id, content: doc({ component: 'hero', _uid: 'x', color: 'red' }) })
    expect(Object.keys(badField.body.errors)).toEqual(['content/blocks/0/color'])
    const noDoc = await addVariant(s.uuid, { audience_segment_id: seg.id, content: 'text' })
    expect(Object.keys(noDoc.body.errors)).toEqual(['content'])
    const missing = await addVariant(s.uuid, { content: doc() })
    expect(missing.status).toBe(422)
    const foreignSeg = await segmentOk({ key: 'foreign' }, other)
    const cross = await addVariant(s.uuid, { audience_segment_id: foreignSeg.id, content: doc() })
    expect({ status: cross.status, field: Object.keys(cross.body.errors ?? {}) }).toEqual({ status: 422, field: ['audience_segment_id'] })

    const id = created.body.data.id
    const patched = await t.request('PATCH', `${variants(s.uuid)}/${id}`, { token: editor, body: { content: doc(hero('h', 'patched')) } })
    expect(patched.status).toBe(200)
    expect(patched.body.data).toMatchObject({ id, lang: 'en', content: doc(hero('h', 'patched')) })
    const clash = await t.request('PATCH', `${variants(s.uuid)}/${id}`, { token: editor, body: { lang: 'de' } })
    expect(clash.status).toBe(409)
    expect((await t.request('DELETE', `${variants(s.uuid)}/${id}`, { token: editor })).status).toBe(204)
    expect((await t.request('DELETE', `${variants(s.uuid)}/${id}`, { token: editor })).status).toBe(404)
    expect((await t.request('GET', variants(s.uuid), { token: viewer })).body.data.length).toBe(1)
    await deleteSegment(seg.id)
  })

  test('viewers cannot write (403); another Story’s or Space’s ids are 404', async () => {
    const seg = await segmentOk({ key: 'v-auth' })
    const s = await storyOk('v-auth', 'default')
    const s2 = await storyOk('v-auth-2', 'default')
    const v = (await addVariant(s.uuid, { audience_segment_id: seg.id, content: doc() })).body.data
    expect((await addVariant(s.uuid, { audience_segment_id: seg.id, content: doc(), lang: 'de' }, space, viewer)).status).toBe(403)
    expect((await t.request('PATCH', `${variants(s.uuid)}/${v.id}`, { token: viewer, body: { content: doc() } })).status).toBe(403)
    expect((await t.request('DELETE', `${variants(s.uuid)}/${v.id}`, { token: viewer })).status).toBe(403)
    // The variant belongs to another Story; the Story to another Space.
    expect((await t.request('PATCH', `${variants(s2.uuid)}/${v.id}`, { token: editor, body: { content: doc() } })).status).toBe(404)
    expect((await t.request('DELETE', `${variants(s2.uuid)}/${v.id}`, { token: editor })).status).toBe(404)
    expect((await t.request('GET', variants(s.uuid, other), { token: admin })).status).toBe(404)
    expect((await addVariant(s.uuid, { audience_segment_id: seg.id, content: doc() }, other, admin)).status).toBe(404)
    expect((await t.request('GET', variants(crypto.randomUUID()), { token: admin })).status).toBe(404)
    // An archived Story takes no variant writes (it can only be deleted); reading still works.
    expect((await t.request('POST', `/v1/spaces/${space}/stories/${s2.uuid}/archive`, { token: editor })).status).toBe(200)
    const archived = await addVariant(s2.uuid, { audience_segment_id: seg.id, content: doc() })
    expect({ status: archived.status, error: archived.body.error }).toEqual({ status: 409, error: 'story_archived' })
    expect((await t.request('GET', variants(s2.uuid), { token: viewer })).status).toBe(200)
    // Deleting the segment deletes its variants.
    await deleteSegment(seg.id)
    expect((await t.request('GET', variants(s.uuid), { token: viewer })).body.data).toEqual([])
  })
})

describe('public reads', () => {
  test('a Space without segments keeps public caching and serves meta.served_segment null', async () => {
    const s = (await t.createSpace(admin)).slug
    await t.request('POST', `/v1/spaces/${s}/components`, { token: admin, body: { name: 'hero', is_root: true, schema: { headline: { type: 'text' } } } })
    const st = await t.request('POST', `/v1/spaces/${s}/stories`, { token: admin, body: { name: 'p', slug: 'plain', content: doc(hero('h', 'x')) } })
    await t.request('POST', `/v1/spaces/${s}/stories/${st.body.data.uuid}/publish`, { token: admin })
    // An inactive segment does not count.
    await segmentOk({ key: 'sleeping', active: false }, s)
    for (const query of ['', '?utm_source=x']) {
      const r = await cdn(`plain${query}`, {}, s)
      expect(r.status).toBe(200)
      expect(r.body.meta.served_segment).toBe(null)
      expect(r.headers.get('cache-control')).toStartWith('public, max-age=')
      expect(r.headers.get('x-service-segment')).toBe(null)
      expect(r.headers.get('vary')).toContain('X-Service-Segment')
    }
  })

  test('variants per locale; headers and ETag per served segment; private when chosen from signals', async () => {
    const vip = await segmentOk({ key: 'vip', priority: 1, rules: [{ type: 'cookie', key: 'tier', operator: 'eq', value: 'vip' }] })
    const plain = await segmentOk({ key: 'plain', priority: 2, rules: [{ type: 'query', key: 'plain', operator: 'eq', value: '1' }] })
    const s = await storyOk('offer', 'default')
    await t.request('PUT', `/v1/spaces/${space}/stories/${s.uuid}`, { token: editor, body: { lang: 'de', content: doc(hero('h', 'standard')) } })
    expect((await addVariant(s.uuid, { audience_segment_id: vip.id, content: doc(hero('h', 'vip en')) })).status).toBe(201)
    expect((await addVariant(s.uuid, { audience_segment_id: vip.id, content: doc(hero('h', 'vip de')), lang: 'de' })).status).toBe(201)
    expect((await publish(s.uuid)).status).toBe(200)

    // Chosen from signals (a cookie): the variant, private.
    const a = await cdn('offer', { Cookie: 'tier=VIP' })
    expect(headlineOf(a)).toBe('vip en')
    expect(a.body.meta.served_segment).toBe('vip')
    expect(a.headers.get('x-service-segment')).toBe('vip')
    expect(a.headers.get('cache-control')).toBe(`private, max-age=${t.config.cdnMaxAge}`)
    expect(a.headers.get('vary')).toContain('X-Service-Segment')
    const aDe = await cdn('offer?lang=de', { Cookie: 'tier=vip' })
    expect(headlineOf(aDe)).toBe('vip de')
    expect(aDe.body.data.lang).toBe('de')
    const aDeHeader = await cdn('offer', { Cookie: 'tier=vip', 'Accept-Language': 'de' })
    expect(headlineOf(aDeHeader)).toBe('vip de')

    // No segment matched in a Space with active segments: the default, still private (the answer depends on signals).
    const none = await cdn('offer')
    expect(headlineOf(none)).toBe('default')
    expect(none.body.meta.served_segment).toBe(null)
    expect(none.headers.get('x-service-segment')).toBe(null)
    expect(none.headers.get('cache-control')).toBe(`private, max-age=${t.config.cdnMaxAge}`)

    // A segment without a variant: the default content, but meta and header name the segment.
    const p = await cdn('offer?plain=1')
    expect(headlineOf(p)).toBe('default')
    expect(p.body.meta.served_segment).toBe('plain')
    expect(p.headers.get('x-service-segment')).toBe('plain')

    // The header short-cut: no rules evaluated, publicly cacheable.
    const h = await cdn('offer', { 'X-Service-Segment': 'vip' })
    expect(headlineOf(h)).toBe('vip en')
    expect(h.headers.get('cache-control')).toStartWith('public, max-age=')
    expect(h.headers.get('x-service-segment')).toBe('vip')
    expect(h.headers.get('etag')).toBe(a.headers.get('etag'))
    // An unknown header value is ignored.
    const u = await cdn('offer', { 'X-Service-Segment': 'who' })
    expect(u.body.meta.served_segment).toBe(null)
    expect(u.headers.get('cache-control')).toBe(`private, max-age=${t.config.cdnMaxAge}`)

    // The ETag covers the served segment: three different bodies, three ETags; If-None-Match per segment.
    const etags = new Set([a.headers.get('etag'), none.headers.get('etag'), p.headers.get('etag')])
    expect(etags.size).toBe(3)
    const nm = await cdn('offer', { 'X-Service-Segment': 'vip', 'If-None-Match': a.headers.get('etag')! })
    expect(nm.status).toBe(304)
    expect(nm.headers.get('x-service-segment')).toBe('vip')
    expect((await cdn('offer', { 'If-None-Match': a.headers.get('etag')! })).status).toBe(200)
    // The cached path (second read) answers the same bytes and headers.
    const again = await cdn('offer', { Cookie: 'tier=vip' })
    expect(again.text).toBe(a.text)
    expect(again.headers.get('cache-control')).toBe(a.headers.get('cache-control'))
    await deleteSegment(vip.id)
    await deleteSegment(plain.id)
  })

  test('variants are published with their Story; drafts show with ?version=draft', async () => {
    const seg = await segmentOk({ key: 'drafty', rules: [{ type: 'query', key: 'd', operator: 'eq', value: '1' }] })
    const s = await storyOk('drafty', 'default')
    await publish(s.uuid)
    const v = await addVariant(s.uuid, { audience_segment_id: seg.id, content: doc(hero('h', 'draft variant')) })
    expect(v.status).toBe(201)
    const story = await t.request('GET', `/v1/spaces/${space}/stories/${s.uuid}`, { token: viewer })
    expect(story.body.data.has_unpublished_changes).toBe(true)
    // Published: not yet.
    expect(headlineOf(await cdn('drafty', { 'X-Service-Segment': 'drafty' }))).toBe('default')
    // The draft preview shows it, never cached.
    const preview = await t.request('GET', `/v1/cdn/${space}/stories/drafty?version=draft&d=1`, { token: viewer })
    expect(preview.status).toBe(200)
    expect(headlineOf(preview)).toBe('draft variant')
    expect(preview.body.meta.served_segment).toBe('drafty')
    expect(preview.headers.get('cache-control')).toBe('private, no-store')

    expect((await publish(s.uuid)).status).toBe(200)
    expect(headlineOf(await cdn('drafty', { 'X-Service-Segment': 'drafty' }))).toBe('draft variant')
    expect(headlineOf(await cdn('drafty?d=1'))).toBe('draft variant')

    // Editing after publishing changes the CDN only at the next publish.
    await t.request('PATCH', `${variants(s.uuid)}/${v.body.data.id}`, { token: editor, body: { content: doc(hero('h', 'edited')) } })
    expect((await t.request('GET', `/v1/spaces/${space}/stories/${s.uuid}`, { token: viewer })).body.data.has_unpublished_changes).toBe(true)
    expect(headlineOf(await cdn('drafty', { 'X-Service-Segment': 'drafty' }))).toBe('draft variant')
    expect(headlineOf(await t.request('GET', `/v1/cdn/${space}/stories/drafty?version=draft&d=1`, { token: viewer }))).toBe('edited')
    await publish(s.uuid)
    expect(headlineOf(await cdn('drafty', { 'X-Service-Segment': 'drafty' }))).toBe('edited')

    // A deleted variant is served until the next publish, too.
    await t.request('DELETE', `${variants(s.uuid)}/${v.body.data.id}`, { token: editor })
    expect(headlineOf(await cdn('drafty', { 'X-Service-Segment': 'drafty' }))).toBe('edited')
    await publish(s.uuid)
    expect(headlineOf(await cdn('drafty', { 'X-Service-Segment': 'drafty' }))).toBe('default')

    // Unpublishing withdraws the variants with the Story.
    await addVariant(s.uuid, { audience_segment_id: seg.id, content: doc(hero('h', 'again')) })
    await publish(s.uuid)
    await t.request('POST', `/v1/spaces/${space}/stories/${s.uuid}/unpublish`, { token: editor })
    expect((await cdn('drafty', { 'X-Service-Segment': 'drafty' })).status).toBe(404)
    const rows = await t.kernel.db.query<{ n: number }>('select count(*)::int as n from story_variants_published where story_id = $1', [s.id])
    expect(Number(rows[0].n)).toBe(0)
    await deleteSegment(seg.id)
  })

  test('a CDN read right after a segment edit shows the new resolution, here and on another instance', async () => {
    const seg = await segmentOk({ key: 'live', rules: [{ type: 'query', key: 'x', operator: 'eq', value: '1' }] })
    const s = await storyOk('live', 'default')
    await addVariant(s.uuid, { audience_segment_id: seg.id, content: doc(hero('h', 'live variant')) })
    await publish(s.uuid)
    const second = await t.instance()
    const otherRead = async (q: string, headers: Record<string, string> = {}) => (await second.get(`/v1/cdn/${space}/stories/live${q}`, headers)).body
    try {
      expect(headlineOf(await cdn('live?x=1'))).toBe('live variant')
      expect((await otherRead('?x=1')).meta.served_segment).toBe('live')
      expect((await cdn('live?x=2')).body.meta.served_segment).toBe(null)

      await patchSegment(seg.id, { rules: [{ type: 'query', key: 'x', operator: 'eq', value: '2' }] })
      expect((await cdn('live?x=1')).body.meta.served_segment).toBe(null)
      expect(headlineOf(await cdn('live?x=2'))).toBe('live variant')
      let served: unknown = 'stale'
      for (let i = 0; i < 100 && served !== null; i++) {
        served = (await otherRead('?x=1')).meta.served_segment
        if (served !== null) await Bun.sleep(10)
      }
      expect(served).toBe(null)
      expect((await otherRead('?x=2')).meta.served_segment).toBe('live')

      // Renamed: the header short-cut follows, and the cached body of the old key is not served for the new one.
      await patchSegment(seg.id, { key: 'live2' })
      const renamed = await cdn('live', { 'X-Service-Segment': 'live2' })
      expect(renamed.body.meta.served_segment).toBe('live2')
      expect(headlineOf(renamed)).toBe('live variant')
      expect((await cdn('live', { 'X-Service-Segment': 'live' })).body.meta.served_segment).toBe(null)

      // Deactivated: gone from resolution at once.
      await patchSegment(seg.id, { active: false })
      const off = await cdn('live?x=2', { 'X-Service-Segment': 'live2' })
      expect(off.body.meta.served_segment).toBe(null)
      expect(off.headers.get('cache-control')).toStartWith('public, max-age=')
      let header: string | null = 'live2'
      for (let i = 0; i < 100 && header !== null; i++) {
        header = (await second.get(`/v1/cdn/${space}/stories/live`, { 'X-Service-Segment': 'live2' })).headers.get('x-service-segment')
        if (header !== null) await Bun.sleep(10)
      }
      expect(header).toBe(null)
    } finally {
      await second.close()
      await deleteSegment(seg.id)
    }
  })

  test('query parameters other than lang and version are let through; theirs are still validated', async () => {
    const s = await storyOk('params', 'default')
    await publish(s.uuid)
    expect((await cdn('params?utm_source=news&anything=1')).status).toBe(200)
    expect((await cdn('params?version=nope')).status).toBe(422)
    expect((await cdn(`params?lang=${'x'.repeat(40)}`)).status).toBe(422)
  })
})
