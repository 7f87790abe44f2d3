// Faults a VPS fleet really has, on real processes of the service against one Postgres:
// - kill -9 of one of three instances in the middle of traffic (behind a proxy that, like a load balancer, sends a
//   refused request to the next instance): the others keep serving, the webhook deliveries the dead one had leased
//   are retried after the lease under their own delivery ids, no acknowledged save is lost, and a restart rejoins;
// - SIGTERM under load: requests whose bodies are still arriving complete, new connections are refused, and the
//   process exits within SHUTDOWN_TIMEOUT.
// Runs on the Postgres suite (TEST_DATABASE_URL).
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import net from 'node:net'
import { type Receiver, startReceiver } from '../helpers/receiver'
import { BOUND_MS, call, doc, fleetEnv, freshDatabase, type Proc, seedSite, serverUrl, sleep, startProxy, startServe, stopAll, waitFor } from './procs'

setDefaultTimeout(60_000)

const procs: Proc[] = []
const cleanups: (() => Promise<void> | void)[] = []

afterAll(async () => {
  await stopAll(procs)
  for (const c of cleanups.reverse()) await c()
})

describe.skipIf(!serverUrl)('faults in a fleet on one Postgres', () => {
  test('kill -9 of one instance mid-traffic: the others serve, its leased jobs are retried, nothing acknowledged is lost, a restart rejoins', async () => {
    const db = await freshDatabase('cs_kill')
    cleanups.push(() => db.drop())
    // A slow receiver: deliveries are in flight (leased) on every instance. Once the test is ready to kill, it holds
    // every new request until the kill, so the victim provably dies holding a lease (not by luck of timing).
    let holding = false
    let release = () => {}
    const killed = new Promise<void>((r) => (release = r))
    const receiver: Receiver = startReceiver(async () => {
      if (holding) await Promise.race([killed, sleep(30_000)])
      else await sleep(1500)
      return new Response('ok')
    })
    cleanups.push(() => receiver.stop())
    const env = fleetEnv(db.url, { JOB_LEASE_SECONDS: '3' })
    procs.push(await startServe(env))
    const fleet = [procs[0], ...(await Promise.all([startServe(env), startServe(env)]))]
    procs.push(fleet[1], fleet[2])
    const alive = new Set(fleet)
    const proxy = startProxy(() => fleet.filter((p) => alive.has(p)))
    cleanups.push(() => proxy.server.stop(true))
    const P = proxy.base

    const { token, stories } = await seedSite(P, 6)
    expect((await call(P, 'POST', '/spaces/site/webhooks', { token, body: { label: 'k', url: `${receiver.url}/hook`, events: ['story.published'], active: true } })).status).toBe(201)

    let publishes = 0
    for (const s of stories) {
      expect((await call(P, 'POST', `/spaces/site/stories/${s.uuid}/publish`, { token })).status).toBe(200)
      publishes++
    }
    const acknowledged: { uuid: string; version: number; headline: string }[] = []
    const failures: string[] = []
    let stop = false
    const editor = async (s: (typeof stories)[number], lane: number) => {
      for (let round = 0; !stop; round++) {
        const headline = `k${round}-${lane}`
        const saved = await call(P, 'PUT', `/spaces/site/stories/${s.uuid}`, { token, body: { content: doc(headline), expected_version_no: s.version } })
        if (saved.status === 200) {
          s.version = saved.body.data.version_no
          acknowledged.push({ uuid: s.uuid, version: s.version, headline })
        } else if (saved.status === 409) {
          // The save reached an instance that committed it and died before answering; the proxy sent it again.
          const now = await call(P, 'GET', `/spaces/site/stories/${s.uuid}`, { token })
          s.version = now.body.data.version_no
          continue
        } else {
          failures.push(`save ${saved.status} ${saved.text.slice(0, 200)}`)
          continue
        }
        const pub = await call(P, 'POST', `/spaces/site/stories/${s.uuid}/publish`, { token })
        if (pub.status === 200) publishes++
        else failures.push(`publish ${pub.status} ${pub.text.slice(0, 200)}`)
      }
    }
    const reader = async () => {
      for (let i = 0; !stop; i++) {
        const r = await call(P, 'GET', `/cdn/site/stories/page-${i % stories.length}`)
        if (r.status !== 200) failures.push(`cdn ${r.status}`)
      }
    }
    const traffic = Promise.all([...stories.map((s, i) => editor(s, i)), reader(), reader()])
    await waitFor('traffic under way', async () => (publishes >= 10 && receiver.open > 0 ? true : undefined))
    const victim = fleet[1]
    holding = true
    const leasedByVictim = async () =>
      (await db.sql`select id::text as id from jobs where queue = 'webhooks.deliver' and status = 'running' and locked_by like ${`%:${victim.child.pid}:%`}`).map((r) => r.id as string)
    const held = await waitFor('the victim holding a job lease', async () => {
      const ids = await leasedByVictim()
      return ids.length ? ids : undefined
    })
    victim.child.kill('SIGKILL')
    await victim.child.exited
    alive.delete(victim)
    holding = false
    release()
    const afterKill = publishes
    await waitFor('traffic after the kill', async () => (publishes >= afterKill + 20 ? true : undefined))
    stop = true
    await traffic
    // The others kept serving: not one request of the traffic failed.
    expect(failures).toEqual([])

    // Every delivery ends delivered, those of the dead instance after their lease ran out (3 s), under their own id.
    await waitFor('every delivery made', async () => {
      const [{ n }] = await db.sql`select count(*)::int as n from webhook_deliveries where status <> 'delivered'`
      return n === 0 ? true : undefined
    })
    const rows = await db.sql`select id::text as id from webhook_deliveries`
    expect(rows.length).toBeGreaterThanOrEqual(publishes)
    const received = new Set(receiver.requests.map((r) => r.headers['x-service-delivery']))
    for (const r of rows) expect(received.has(r.id)).toBe(true)
    // The jobs the dead instance held when it died were taken over after their lease: done, on a second attempt.
    const takenOver = await db.sql`select status, attempts from jobs where id = any(${held}::bigint[])`
    expect(takenOver.length).toBe(held.length)
    for (const j of takenOver) expect({ status: j.status, retried: j.attempts > 1 }).toEqual({ status: 'done', retried: true })
    // Deliveries the dead instance had sent arrive again under the same id, with the same event (only the time of
    // the attempt, `delivered_at`, differs).
    const byId = Map.groupBy(receiver.requests, (r) => r.headers['x-service-delivery'])
    const event = (json: any) => ({ ...json, delivered_at: undefined })
    for (const copies of byId.values()) for (const c of copies) expect(event(c.json)).toEqual(event(copies[0].json))

    // No acknowledged save is lost.
    for (const a of acknowledged) {
      const v = await call(P, 'GET', `/spaces/site/stories/${a.uuid}/versions/${a.version}`, { token })
      expect({ status: v.status, headline: v.body?.data?.content?.blocks?.[0]?.headline }).toEqual({ status: 200, headline: a.headline })
    }

    // A restart of the killed instance rejoins: it serves, and follows a publish made on another instance.
    const back = await startServe(env)
    procs.push(back)
    const s = stories[0]
    await waitFor('the restarted instance serving the current bytes', async () => {
      const [a, b] = await Promise.all([call(back.base, 'GET', `/cdn/site/stories/${s.slug}`), call(fleet[0].base, 'GET', `/cdn/site/stories/${s.slug}`)])
      return a.status === 200 && a.text === b.text ? true : undefined
    })
    const saved = await call(fleet[0].base, 'PUT', `/spaces/site/stories/${s.uuid}`, { token, body: { content: doc('after the restart'), expected_version_no: s.version } })
    expect(saved.status).toBe(200)
    expect((await call(fleet[2].base, 'POST', `/spaces/site/stories/${s.uuid}/publish`, { token })).status).toBe(200)
    await waitFor('the publish on the restarted instance', async () => {
      const r = await call(back.base, 'GET', `/cdn/site/stories/${s.slug}`)
      return r.body?.data?.content?.blocks?.[0]?.headline === 'after the restart' ? true : undefined
    })
  }, 5 * BOUND_MS)

  test('SIGTERM under load: requests in flight complete, new connections are refused, the process exits in time', async () => {
    const db = await freshDatabase('cs_term')
    cleanups.push(() => db.drop())
    const server = await startServe(fleetEnv(db.url, { SHUTDOWN_TIMEOUT: '20' }))
    procs.push(server)
    const { token, stories } = await seedSite(server.base, 12)

    // Each save's body arrives in 8 pieces over about 2 s: the request is in flight when SIGTERM comes.
    const slowSave = (s: (typeof stories)[number], started: () => void) =>
      new Promise<{ status: number; error?: string }>((resolve) => {
        const body = JSON.stringify({ content: doc(`slow ${'x'.repeat(20_000)}`), expected_version_no: s.version })
        const bytes = Buffer.from(body)
        const socket = net.connect(server.port, '127.0.0.1')
        let answer = ''
        socket.on('data', (d) => {
          answer += d.toString('latin1')
        })
        socket.on('error', (err) => resolve({ status: 0, error: String(err) }))
        socket.on('close', () => {
          const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)
          resolve(status ? { status } : { status: 0, error: `no answer: ${answer.slice(0, 100)}` })
        })
        socket.on('connect', async () => {
          socket.write(
            `PUT /v1/spaces/site/stories/${s.uuid} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
              `Content-Type: application/json\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`,
          )
          const piece = Math.ceil(bytes.length / 8)
          for (let i = 0; i < 8; i++) {
            socket.write(bytes.subarray(i * piece, (i + 1) * piece))
            if (i === 0) started()
            await sleep(250)
          }
        })
      })
    let started = 0
    const saves = stories.map((s) => slowSave(s, () => started++))
    await waitFor('every save under way', async () => (started === stories.length ? true : undefined))
    const t0 = Date.now()
    server.child.kill('SIGTERM')
    // New connections are refused once shutdown has begun.
    await waitFor('new connections refused', async () => {
      try {
        await fetch(`${server.base}/health/live`, { signal: AbortSignal.timeout(5000) })
        return undefined
      } catch {
        return true
      }
    })
    const results = await Promise.all(saves)
    expect(results).toEqual(stories.map(() => ({ status: 200 })))
    expect(await server.child.exited).toBe(0)
    console.log(`SIGTERM under load: ${stories.length} saves in flight completed; exited ${((Date.now() - t0) / 1000).toFixed(1)} s after SIGTERM`)
    // Every one of them is stored.
    const rows = await db.sql`select count(*)::int as n from story_versions where content::text like '%slow xxxx%'`
    expect(rows[0].n).toBe(stories.length)
  }, 3 * BOUND_MS)
})
