import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { createServer, type Server, type Socket } from 'node:net'
import { type TestApp, testApp } from './helpers/app'

// Generous: the first PGlite database of a process is built by initdb, over a minute on a loaded machine.
setDefaultTimeout(180_000)

// An SMTP server that accepts connections and then says nothing (no greeting): a send to it hangs until the socket
// goes. While a form's e-mail action hangs there, the database must stay usable: the action's job holds no
// transaction and no connection while it sends (kernel/jobs claims and commits first; forms/actions.ts records the
// outcome afterwards in a new short transaction).
let t: TestApp
let smtp: Server
const sockets = new Set<Socket>()
let released = false
let admin: string
let space: string

beforeAll(async () => {
  smtp = createServer((socket) => {
    if (released) return void socket.destroy()
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()))
  const port = (smtp.address() as { port: number }).port
  t = await testApp({ publicUrl: 'https://cms.example.com' }, { SMTP_URL: `smtp://127.0.0.1:${port}` })
  const owner = await t.register()
  admin = owner.token
  space = (await t.createSpace(admin, { name: 'Stall' })).slug
})

afterAll(async () => {
  released = true
  for (const s of sockets) s.destroy()
  await t?.close()
  await new Promise((resolve) => smtp?.close(resolve))
})

const rows = (sql: string, params: unknown[] = []) => t.kernel.db.query<any>(sql, params)

test('a stalled SMTP server holds no transaction and no connection: submits and reads go on; the outcome is recorded after', async () => {
  const form = await t.request('POST', `/v1/spaces/${space}/forms`, {
    token: admin,
    body: {
      slug: 'contact',
      label: 'Contact',
      submit_action: 'email',
      notification_email: 'team@example.com',
      rate_limit_per_ip: 100,
      fields: [
        { key: 'name', type: 'text', label: 'Name', required: true },
        { key: 'email', type: 'email', label: 'E-mail', required: true },
      ],
    },
  })
  expect(form.status).toBe(201)
  const submit = (n: number) => t.request('POST', `/v1/cdn/${space}/forms/contact`, { body: { data: { name: `Ada ${n}`, email: `ada${n}@example.com` } } })
  const first = await submit(1)
  expect(first.status).toBe(201)

  // The action job runs and hangs in the SMTP conversation.
  const running = t.kernel.jobs.runDueJobs()
  while (sockets.size === 0) await Bun.sleep(10)
  const [job] = await rows(`select status from jobs where queue = 'forms.action'`)
  expect(job.status).toBe('running') // claimed, and the claim committed

  // While it hangs: submits (the batched writer's transaction), management reads and raw queries all answer.
  for (let n = 2; n <= 6; n++) expect((await submit(n)).status).toBe(201)
  const list = await t.request('GET', `/v1/spaces/${space}/forms/${form.body.data.uuid}/submissions?include_spam=1`, { token: admin })
  expect(list.status).toBe(200)
  expect(list.body.meta.total).toBe(6)
  expect(await rows('select 1 as one')).toEqual([{ one: 1 }])
  if (t.kernel.db.driver === 'postgres') {
    // No session of this database sits in an open transaction while the send waits.
    const [idle] = await rows(`select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`)
    expect(idle.n).toBe(0)
  }
  // The send is still hanging: nothing above waited for it.
  expect(sockets.size).toBeGreaterThan(0)
  const [still] = await rows(`select action_status from form_submissions where uuid = $1`, [first.body.data.submission_uuid])
  expect(still.action_status).toBe('pending')

  // The SMTP server goes away: the attempt fails and its outcome is recorded in a new transaction (retry later).
  released = true
  for (const s of sockets) s.destroy()
  await running
  const [after] = await rows(`select action_status, action_error from form_submissions where uuid = $1`, [first.body.data.submission_uuid])
  expect(after.action_status).toBe('pending')
  expect(after.action_error).toBeTruthy()
  const jobs = await rows(`select status, last_error from jobs where queue = 'forms.action' order by id`)
  expect(jobs.length).toBe(6)
  for (const j of jobs) {
    expect(j.status).toBe('pending') // scheduled for a retry
    expect(j.last_error).toBeTruthy()
  }
})
