import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { BUILT_IN_PLANS, ConfigError, loadConfig } from '../src/config'
import { type DomainEvent, transact } from '../src/kernel/events'
import { billingModule } from '../src/modules/billing'
import { type TestApp, testApp } from './helpers/app'
import { type SmtpSink, startSmtpSink } from './helpers/smtp'
import { SERVICE_COMMAND } from './helpers/command'

setDefaultTimeout(60_000)

const PLANS = {
  tiny: { spaces: 2, stories_per_space: 5, asset_bytes: 1000, members_per_space: 2, requests_per_month: null },
  calls: { requests_per_month: 5 },
}

let t: TestApp
let sink: SmtpSink
const planChanges: DomainEvent<'billing.plan_changed'>[] = []

beforeAll(async () => {
  sink = await startSmtpSink()
  // Counted requests are written when a test says so (flushRequests), never by the timer in the middle of one.
  t = await testApp(
    { publicUrl: 'https://cms.example.com' },
    { SMTP_URL: sink.url, PLANS: JSON.stringify(PLANS), BILLING_SELF_SERVE: 'true', BILLING_FLUSH_SECONDS: '3600' },
  )
  t.kernel.bus.subscribe('billing.plan_changed', (e) => void planChanges.push(e))
})
afterAll(async () => {
  await t?.close()
  await sink?.stop()
})

/** A new Tenant (its owner) with one Space, on `plan` (self-serve). */
async function tenantOn(plan: string | null) {
  const owner = await t.register()
  const space = (await t.createSpace(owner.token)).slug
  if (plan) {
    const res = await t.request('PATCH', `/v1/spaces/${space}/billing`, { token: owner.token, body: { plan } })
    expect(res.status).toBe(200)
  }
  return { owner, token: owner.token, tenantId: owner.tenant.id, space }
}

const billing = async (token: string, space: string) => {
  const res = await t.request('GET', `/v1/spaces/${space}/billing`, { token })
  expect(res.status).toBe(200)
  return res.body.data
}

const createStory = (token: string, space: string, slug: string) =>
  t.request('POST', `/v1/spaces/${space}/stories`, { token, body: { name: slug, slug } })

function pdf(size: number): Uint8Array {
  const out = new Uint8Array(size).fill(32)
  out.set(new TextEncoder().encode('%PDF-1.7\n'))
  return out
}
function upload(token: string, space: string, bytes: Uint8Array) {
  const fd = new FormData()
  fd.append('file', new Blob([bytes as BlobPart], { type: 'application/pdf' }), 'doc.pdf')
  return t.request('POST', `/v1/spaces/${space}/assets`, { token, raw: fd })
}

function expectPlanLimit(res: { status: number; body: any }, limit: string, value: number, usage: number) {
  expect(res.status).toBe(402)
  expect(res.body.error).toBe('plan_limit')
  expect(res.body.details).toEqual({ limit, value, usage })
  expect(res.body.message).toContain(limit)
}

describe('plans and the billing routes', () => {
  test('a fresh install is unlimited: billing and whoami show the plan, usage counts the Space and its creator', async () => {
    const { token, space } = await tenantOn(null)
    const b = await billing(token, space)
    expect(b.plan).toBe('unlimited')
    expect(b.limits).toEqual(BUILT_IN_PLANS.unlimited as never)
    expect(b.usage).toEqual({ spaces: 1, stories_per_space: 0, asset_bytes: 0, members_per_space: 1, requests_per_month: expect.any(Number) })
    const now = new Date(t.clock.ms())
    expect(b.period).toEqual({
      start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
      end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
    })
    // What the admin's plan change offers: the switch and the configured plans.
    expect(b.self_serve).toBe(t.kernel.config.billingSelfServe)
    expect(b.plans.map((p: { name: string }) => p.name)).toContain('unlimited')
    const who = await t.request('GET', '/v1/whoami', { token })
    expect(who.body.data.plan).toEqual({ name: 'unlimited', limits: BUILT_IN_PLANS.unlimited })
  })

  test('PATCH moves the Tenant to a configured plan; whoami follows; an unknown plan is 422', async () => {
    const { token, space } = await tenantOn(null)
    const res = await t.request('PATCH', `/v1/spaces/${space}/billing`, { token, body: { plan: 'tiny' } })
    expect(res.status).toBe(200)
    expect(res.body.data.plan).toBe('tiny')
    expect(res.body.data.limits).toEqual({ ...PLANS.tiny })
    expect((await t.request('GET', '/v1/whoami', { token })).body.data.plan).toEqual({ name: 'tiny', limits: { ...PLANS.tiny } })
    const bad = await t.request('PATCH', `/v1/spaces/${space}/billing`, { token, body: { plan: 'gold' } })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.errors)).toEqual(['plan'])
    expect((await billing(token, space)).plan).toBe('tiny')
  })

  test('roles: an editor gets 403, an outsider 404, a Space token 403 user_required, an admin from another Tenant 403', async () => {
    const { token, tenantId, space } = await tenantOn(null)
    const editor = await t.member(tenantId, space, 'editor')
    expect((await t.request('GET', `/v1/spaces/${space}/billing`, { token: editor })).status).toBe(403)
    expect((await t.request('PATCH', `/v1/spaces/${space}/billing`, { token: editor, body: { plan: 'pro' } })).status).toBe(403)
    const outsider = await t.register()
    expect((await t.request('GET', `/v1/spaces/${space}/billing`, { token: outsider.token })).status).toBe(404)
    expect((await t.request('PATCH', `/v1/spaces/${space}/billing`, { token: outsider.token, body: { plan: 'pro' } })).status).toBe(404)
    const spaceAdmin = await t.spaceToken(token, space, 'admin')
    expect((await t.request('GET', `/v1/spaces/${space}/billing`, { token: spaceAdmin.token })).status).toBe(200)
    const scoped = await t.request('PATCH', `/v1/spaces/${space}/billing`, { token: spaceAdmin.token, body: { plan: 'pro' } })
    expect(scoped.status).toBe(403)
    expect(scoped.body.error).toBe('user_required')
    // An admin of this Space who belongs to another Tenant runs the Space, not its owner's subscription.
    const foreign = await t.register()
    const [s] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [space])
    await t.kernel.db.query("insert into memberships (user_id, space_id, role, created_at) values ($1, $2, 'admin', now())", [foreign.user.id, s.id])
    const cross = await t.request('PATCH', `/v1/spaces/${space}/billing`, { token: foreign.token, body: { plan: 'pro' } })
    expect(cross.status).toBe(403)
    expect(cross.body.error).toBe('forbidden')
  })

  test('with BILLING_SELF_SERVE off a plan change is 403 self_serve_disabled', async () => {
    const other = await testApp({}, {})
    try {
      const owner = await other.register()
      const space = (await other.createSpace(owner.token)).slug
      const res = await other.request('PATCH', `/v1/spaces/${space}/billing`, { token: owner.token, body: { plan: 'pro' } })
      expect(res.status).toBe(403)
      expect(res.body.error).toBe('self_serve_disabled')
      expect((await other.request('GET', `/v1/spaces/${space}/billing`, { token: owner.token })).body.data.plan).toBe('unlimited')
    } finally {
      await other.close()
    }
  })
})

describe('limits', () => {
  test('Stories: 20 creates at once against a limit of 5 — exactly 5 succeed, 15 get 402; the counter equals the rows', async () => {
    const { token, space } = await tenantOn('tiny')
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => createStory(token, space, `s${i}`)))
    const ok = results.filter((r) => r.status === 201)
    const refused = results.filter((r) => r.status === 402)
    expect(ok.length).toBe(5)
    expect(refused.length).toBe(15)
    for (const r of refused) expectPlanLimit(r, 'stories_per_space', 5, 5)
    const list = await t.request('GET', `/v1/spaces/${space}/stories`, { token })
    expect(list.body.meta.total).toBe(5)
    expect((await billing(token, space)).usage.stories_per_space).toBe(5)

    // Deletes are never blocked and free a place; an archive does too.
    const del = await t.request('DELETE', `/v1/spaces/${space}/stories/${ok[0].body.data.uuid}`, { token })
    expect(del.status).toBe(204)
    expect((await billing(token, space)).usage.stories_per_space).toBe(4)
    expect((await createStory(token, space, 'again')).status).toBe(201)
    expectPlanLimit(await createStory(token, space, 'over'), 'stories_per_space', 5, 5)
    expect((await t.request('POST', `/v1/spaces/${space}/stories/${ok[1].body.data.uuid}/archive`, { token })).status).toBe(200)
    expect((await billing(token, space)).usage.stories_per_space).toBe(4)
    // Deleting the archived Story does not count it twice.
    expect((await t.request('DELETE', `/v1/spaces/${space}/stories/${ok[1].body.data.uuid}`, { token })).status).toBe(204)
    expect((await billing(token, space)).usage.stories_per_space).toBe(4)
    expect((await t.request('GET', `/v1/spaces/${space}/stories`, { token })).body.meta.total).toBe(4)
  })

  test('Spaces per Tenant: the third Space of a 2-Space plan is 402; archiving one frees its place', async () => {
    const { token, space } = await tenantOn('tiny')
    const second = await t.request('POST', '/v1/spaces', { token, body: { slug: `b-${Date.now()}`, name: 'Second' } })
    expect(second.status).toBe(201)
    const third = await t.request('POST', '/v1/spaces', { token, body: { slug: `c-${Date.now()}`, name: 'Third' } })
    expectPlanLimit(third, 'spaces', 2, 2)
    // The refused create left nothing behind.
    expect((await t.request('GET', `/v1/spaces/c-${Date.now()}`, { token })).status).toBe(404)
    expect((await t.request('POST', `/v1/spaces/${second.body.data.slug}/archive`, { token })).status).toBe(200)
    expect((await billing(token, space)).usage.spaces).toBe(1)
    expect((await t.request('POST', '/v1/spaces', { token, body: { slug: `d-${Date.now()}`, name: 'Fourth' } })).status).toBe(201)
  })

  test('asset bytes per Tenant: an upload past the limit is 402; deleting an asset gives its bytes back', async () => {
    const { token, space } = await tenantOn('tiny')
    const first = await upload(token, space, pdf(600))
    expect(first.status).toBe(201)
    expect((await billing(token, space)).usage.asset_bytes).toBe(600)
    expectPlanLimit(await upload(token, space, pdf(600)), 'asset_bytes', 1000, 600)
    expectPlanLimit(await upload(token, space, pdf(1200)), 'asset_bytes', 1000, 600)
    expect((await t.request('DELETE', `/v1/spaces/${space}/assets/${first.body.data.uuid}`, { token })).status).toBe(204)
    expect((await billing(token, space)).usage.asset_bytes).toBe(0)
    expect((await upload(token, space, pdf(1000))).status).toBe(201)
    expect((await billing(token, space)).usage.asset_bytes).toBe(1000)
  })

  test('members per Space: accepting an invitation past the limit is 402; a removal frees the place', async () => {
    const { token, space } = await tenantOn('tiny')
    const tokenMailedTo = async (to: string) => {
      await t.kernel.jobs.runDueJobs()
      const mail = [...sink.mails].reverse().find((m) => m.to.includes(to))
      return /https:\/\/cms\.example\.com\/invite\/([A-Za-z0-9_-]{43})/.exec(mail?.parsed.text ?? '')![1]
    }
    const join = async () => {
      const person = await t.register()
      expect((await t.request('POST', `/v1/spaces/${space}/invitations`, { token, body: { email: person.user.email, role: 'editor' } })).status).toBe(201)
      return { person, invite: await tokenMailedTo(person.user.email) }
    }
    const a = await join()
    expect((await t.request('POST', `/v1/invite/${a.invite}/accept`, { token: a.person.token })).status).toBe(200)
    expect((await billing(token, space)).usage.members_per_space).toBe(2)
    const b = await join()
    expectPlanLimit(await t.request('POST', `/v1/invite/${b.invite}/accept`, { token: b.person.token }), 'members_per_space', 2, 2)
    expect((await t.request('GET', `/v1/spaces/${space}`, { token: b.person.token })).status).toBe(404)
    expect((await t.request('DELETE', `/v1/spaces/${space}/members/${a.person.user.id}`, { token })).status).toBe(204)
    expect((await billing(token, space)).usage.members_per_space).toBe(1)
    // The refused accept left the invitation live.
    expect((await t.request('POST', `/v1/invite/${b.invite}/accept`, { token: b.person.token })).status).toBe(200)
    expect((await billing(token, space)).usage.members_per_space).toBe(2)
  })

  test('requests per month: past the limit writes are 402, reads and deletes go on; the next month starts afresh', async () => {
    const { token, space } = await tenantOn('calls')
    const story = await createStory(token, space, 'kept')
    const used = async () => (await billing(token, space)).usage.requests_per_month as number
    // Requests are counted in memory; reads keep working whatever the count.
    while ((await used()) < 5) {}
    for (let i = 0; i < 3; i++) expect((await t.request('GET', `/v1/spaces/${space}/stories`, { token })).status).toBe(200)
    const refused = await createStory(token, space, 'refused')
    expect(refused.status).toBe(402)
    expect(refused.body.details.limit).toBe('requests_per_month')
    expect(refused.body.details.value).toBe(5)
    expect(refused.body.details.usage).toBeGreaterThanOrEqual(5)
    // Written in a batch: the count (which includes the GET that reads it) survives the flush and still refuses.
    const before = await used()
    await t.state(billingModule).flushRequests()
    const [row] = await t.kernel.db.query<{ n: string }>(
      "select n from usage_counters where scope = 'tenant' and scope_id = (select tenant_id from spaces where slug = $1) and kind = 'requests'",
      [space],
    )
    expect(Number(row.n)).toBe(before)
    expect((await createStory(token, space, 'refused')).status).toBe(402)
    expect((await t.request('DELETE', `/v1/spaces/${space}/stories/${story.body.data.uuid}`, { token })).status).toBe(204)
    // An admin over the limit can still change the plan.
    expect((await t.request('PATCH', `/v1/spaces/${space}/billing`, { token, body: { plan: 'calls' } })).status).toBe(200)
    // A new month: the count starts at 0.
    const now = new Date(t.clock.ms())
    const saved = t.clock.ms()
    t.clock.set(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 0, 1))
    try {
      expect((await createStory(token, space, 'next-month')).status).toBe(201)
      expect(await used()).toBeLessThan(5)
    } finally {
      t.clock.set(saved)
    }
  })

  test('another instance sees the requests once they are written, and refuses writes past the limit too', async () => {
    const { token, space } = await tenantOn('calls')
    const other = await t.instance()
    try {
      for (let i = 0; i < 6; i++) await t.request('GET', `/v1/spaces/${space}/stories`, { token })
      const auth = { Authorization: `Bearer ${token}` }
      // Not written yet: the other instance knows only its own count.
      const early = (await other.get(`/v1/spaces/${space}/billing`, auth)).body.data.usage.requests_per_month
      expect(early).toBeLessThan(5)
      await t.state(billingModule).flushRequests()
      const seen = (await other.get(`/v1/spaces/${space}/billing`, auth)).body.data.usage.requests_per_month
      expect(seen).toBeGreaterThanOrEqual(8)
      const refused = await other.runtime.handle(
        new Request(`http://localhost/v1/spaces/${space}/stories`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json', 'X-Forwarded-For': '10.200.0.1' },
          body: JSON.stringify({ name: 'x', slug: 'x' }),
        }),
      )
      expect(refused.status).toBe(402)
    } finally {
      await other.close()
    }
  })

  test('the default plan and unlimited plans never refuse', async () => {
    const { token, space } = await tenantOn(null)
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => createStory(token, space, `u${i}`)))
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201))
    expect((await billing(token, space)).usage.stories_per_space).toBe(8)
  })
})

describe('payment.subscription_changed', () => {
  test('moves the plan once per provider event id', async () => {
    const { token, tenantId, space } = await tenantOn(null)
    const emitChange = (plan: string, id: string) =>
      transact(t.kernel, async (_tx, emit) =>
        emit({ type: 'payment.subscription_changed', spaceId: null, payload: { tenant_id: tenantId, plan, provider_event_id: id, provider: 'test' } }),
      )
    const mine = () => planChanges.filter((e) => e.payload.tenant_id === tenantId).map((e) => `${e.payload.source}:${e.payload.plan}`)
    await emitChange('pro', 'evt_1')
    expect((await billing(token, space)).plan).toBe('pro')
    expect((await t.request('PATCH', `/v1/spaces/${space}/billing`, { token, body: { plan: 'tiny' } })).status).toBe(200)
    // The same provider event again (a retried delivery) changes nothing.
    await emitChange('pro', 'evt_1')
    await t.kernel.bus.idle()
    expect((await billing(token, space)).plan).toBe('tiny')
    expect(mine()).toEqual(['provider:pro', 'self_serve:tiny'])
    const [row] = await t.kernel.db.query<{ last_provider_event_id: string }>('select last_provider_event_id from tenant_plans where tenant_id = $1', [tenantId])
    expect(row.last_provider_event_id).toBe('evt_1')
    // A plan PLANS does not name is recorded and ignored; the payment's transaction still commits.
    await emitChange('platinum', 'evt_2')
    expect((await billing(token, space)).plan).toBe('tiny')
    // An event for a Tenant that does not exist is ignored; the emitting transaction commits.
    await transact(t.kernel, async (_tx, emit) =>
      emit({ type: 'payment.subscription_changed', spaceId: null, payload: { tenant_id: 987_654, plan: 'pro', provider_event_id: 'evt_x' } }),
    )
    const [seen] = await t.kernel.db.query<{ n: string }>("select count(*) as n from billing_provider_events where event_id = 'evt_x'")
    expect(Number(seen.n)).toBe(1)
    await emitChange('pro', 'evt_3')
    expect((await billing(token, space)).plan).toBe('pro')
    expect((await t.request('GET', '/v1/whoami', { token })).body.data.plan.name).toBe('pro')
  })
})

describe('counters on an existing install', () => {
  test("the migration's one-time count gives the same numbers the running service keeps", async () => {
    // Some history: Spaces (one archived), Stories (one archived, one deleted), an asset, a second member.
    const { token, tenantId, space } = await tenantOn(null)
    const second = await t.createSpace(token)
    expect((await t.request('POST', `/v1/spaces/${second.slug}/archive`, { token })).status).toBe(200)
    const stories = await Promise.all(['a', 'b', 'c'].map((slug) => createStory(token, space, slug)))
    await t.request('POST', `/v1/spaces/${space}/stories/${stories[0].body.data.uuid}/archive`, { token })
    await t.request('DELETE', `/v1/spaces/${space}/stories/${stories[1].body.data.uuid}`, { token })
    expect((await upload(token, space, pdf(700))).status).toBe(201)
    await t.member(tenantId, space, 'viewer')
    const kept = `scope, scope_id, kind, n from usage_counters where kind <> 'requests' and ((scope = 'tenant' and scope_id = ${tenantId})
      or (scope = 'space' and scope_id in (select id from spaces where tenant_id = ${tenantId})))`
    const before = await t.kernel.db.query(`select ${kept} order by 1, 2, 3`)
    expect(before).toContainEqual({ scope: 'space', scope_id: expect.any(Number), kind: 'stories', n: expect.anything() })
    // What the migration runs, on a database that had no counters.
    const dir = `${import.meta.dir}/../db/migrations`
    const file = [...new Bun.Glob('*_billing.sql').scanSync(dir)][0]
    const seeds = (await Bun.file(`${dir}/${file}`).text())
      .split('--> statement-breakpoint')
      .map((st) => st.replace(/^\s*--.*$/gm, '').trim())
      .filter((st) => st.startsWith('INSERT INTO "usage_counters"'))
    expect(seeds.length).toBe(4)
    await t.kernel.db.query("delete from usage_counters where kind <> 'requests'")
    for (const st of seeds) await t.kernel.db.query(st)
    // t.member adds a membership behind the API's back (no event): the count sees it, the counters did not.
    const after = await t.kernel.db.query(`select ${kept} order by 1, 2, 3`)
    const norm = (rows: any[]) => rows.map((r) => ({ ...r, n: Number(r.n) }))
    const [s] = await t.kernel.db.query<{ id: number }>('select id from spaces where slug = $1', [space])
    const fix = norm(before).map((r) => (r.scope === 'space' && r.scope_id === s.id && r.kind === 'members' ? { ...r, n: r.n + 1 } : r))
    expect(norm(after).filter((r) => r.n !== 0)).toEqual(fix.filter((r) => r.n !== 0))
    expect((await billing(token, space)).usage).toMatchObject({ spaces: 1, stories_per_space: 1, asset_bytes: 700, members_per_space: 2 })
  })
})

describe('configuration and the API description', () => {
  test('PLANS that is not valid JSON, or holds a bad limit, is a clear start-up error; DEFAULT_PLAN must name a plan', () => {
    expect(() => loadConfig({ PLANS: '{"team": {spaces: 3}' })).toThrow(ConfigError)
    expect(() => loadConfig({ PLANS: '{"team": {spaces: 3}' })).toThrow(/PLANS must be a JSON object of plans.*not valid JSON/)
    expect(() => loadConfig({ PLANS: '{"team": {"spaces": -1}}' })).toThrow(/plan "team": spaces must be a non-negative integer or null/)
    expect(() => loadConfig({ PLANS: '{"team": {"seats": 3}}' })).toThrow(/unknown limit "seats"/)
    expect(() => loadConfig({ PLANS: '[1]' })).toThrow(/not an object/)
    expect(() => loadConfig({ DEFAULT_PLAN: 'gold' })).toThrow(/DEFAULT_PLAN must name a plan/)
    const c = loadConfig({ PLANS: '{"team": {"spaces": 3}, "free": {"spaces": 2}}', DEFAULT_PLAN: 'team' })
    expect(c.defaultPlan).toBe('team')
    expect(c.plans.team).toEqual({ spaces: 3, stories_per_space: null, asset_bytes: null, members_per_space: null, requests_per_month: null })
    expect(c.plans.free.spaces).toBe(2)
    expect(c.plans.unlimited).toEqual(BUILT_IN_PLANS.unlimited)
    expect(loadConfig({}).defaultPlan).toBe('unlimited')
  })

  test('the serve command refuses bad PLANS with the message and exit code 2', () => {
    const r = Bun.spawnSync([...SERVICE_COMMAND, 'serve', '--port', '0'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'silent', PLANS: '{oops' },
    })
    expect(r.exitCode).toBe(2)
    expect(r.stderr.toString()).toContain('PLANS must be a JSON object of plans')
  })

  test('402 plan_limit is described on the writes that can answer it, not on reads or billing itself', async () => {
    const doc = (await t.request('GET', '/v1/openapi.json')).body
    for (const [path, method] of [
      ['/v1/spaces', 'post'],
      ['/v1/spaces/{space}/stories', 'post'],
      ['/v1/spaces/{space}/assets', 'post'],
      ['/v1/invite/{token}/accept', 'post'],
    ]) {
      expect({ path, d: doc.paths[path][method].responses['402']?.description }).toEqual({ path, d: expect.stringContaining('plan_limit') })
    }
    expect(doc.paths['/v1/spaces/{space}/stories'].get.responses['402']).toBeUndefined()
    expect(doc.paths['/v1/spaces/{space}/stories/{uuid}'].delete.responses['402']).toBeUndefined()
    expect(doc.paths['/v1/spaces/{space}/billing'].patch.responses['402']).toBeUndefined()
    expect(doc.paths['/v1/auth/logout'].post.responses['402']).toBeUndefined()
    expect(doc.paths['/v1/spaces/{space}/stories/{uuid}/archive'].post.responses['402']).toBeUndefined()
    expect(doc.paths['/v1/spaces/{space}/billing'].patch.responses['403'].description).toContain('self_serve_disabled')
  })
})
