// bun scripts/bench/fastpath.ts [--n=200000]
//
// CPU time per cached public read inside the process, without sockets: the server's `fetch` called in a loop with a
// prebuilt Request, the process's CPU time (process.cpuUsage, so other load on the machine barely moves it) divided by
// the request count. A baseline loop that only builds a Response from the same Blob and headers is measured too, so
// the figure is our per-request JavaScript. For comparing changes to the read path; throughput and latency over
// sockets are bench:read's job.
import { parseArgs } from 'node:util'
import { testApp } from '../../test/helpers/app'

const { values: args } = parseArgs({ options: { n: { type: 'string', default: '200000' } } })
const N = Number(args.n)

const t = await testApp({}, { LOG_LEVEL: 'warn' })
const owner = (await t.register()).token
const sp = await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })
const editor = (await t.spaceToken(owner, sp.slug, 'editor')).token
await t.request('POST', `/v1/spaces/${sp.slug}/components`, { token: editor, body: { name: 'hero', schema: { headline: { type: 'text', required: true } } } })
const text = 'Content lives in Spaces as Stories: block documents with versions, locales and a publishing status. '.repeat(50)
const created = await t.request('POST', `/v1/spaces/${sp.slug}/stories`, {
  token: editor,
  body: { name: 'Bench', slug: 'bench', content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: text }] } },
})
await t.request('POST', `/v1/spaces/${sp.slug}/stories/${created.body.data.uuid}/publish`, { token: editor })

const url = `http://localhost/v1/cdn/${sp.slug}/stories/bench`
const peer = { requestIP: () => ({ address: '127.0.0.1' }) }
const first = await t.app.fetch(new Request(url, { headers: { 'x-forwarded-for': '10.0.0.1' } }), peer)
const etag = first.headers.get('etag')!
await first.arrayBuffer()

function measure(name: string, make: (i: number) => Request, handle: (r: Request) => Response | Promise<Response>) {
  // Requests are built outside the timed region: their cost is the socket layer's in a real server.
  const batch = 4096
  const reqs = Array.from({ length: batch }, (_, i) => make(i))
  for (let i = 0; i < 20_000; i++) handle(reqs[i % batch]) // warm up the JIT
  const before = process.cpuUsage()
  const t0 = performance.now()
  let sync = 0
  for (let i = 0; i < N; i++) {
    const r = handle(reqs[i % batch])
    if (!(r instanceof Promise)) sync++
  }
  const cpu = process.cpuUsage(before)
  const us = (cpu.user + cpu.system) / N
  console.log(`${name.padEnd(28)} ${us.toFixed(2)} µs CPU per request (${((performance.now() - t0) * 1000 / N).toFixed(2)} µs wall, ${sync === N ? 'all synchronous' : `${N - sync} async`})`)
}

const xff = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
const blob = new Blob([await (await t.app.fetch(new Request(url, { headers: { 'x-forwarded-for': '10.0.0.2' } }), peer)).arrayBuffer()])
const headers = new Headers(first.headers)
measure('baseline (Response only)', (i) => new Request(url, { headers: { 'x-forwarded-for': xff(i) } }), () => new Response(blob, { headers }))
measure('cached read 200', (i) => new Request(url, { headers: { 'x-forwarded-for': xff(i) } }), (r) => t.app.fetch(r, peer))
measure('cached read 304', (i) => new Request(url, { headers: { 'x-forwarded-for': xff(i), 'if-none-match': etag } }), (r) => t.app.fetch(r, peer))

// The same Story in a Space with 10 active segments × 3 rules (as bench:read's segment case): without a header every
// rule runs and nothing matches (answered private); with X-Service-Segment the short-cut names one.
const sp2 = await t.createSpace(owner, { default_lang: 'en', locales: ['en', 'de'] })
const editor2 = (await t.spaceToken(owner, sp2.slug, 'editor')).token
await t.request('POST', `/v1/spaces/${sp2.slug}/components`, { token: editor2, body: { name: 'hero', schema: { headline: { type: 'text', required: true } } } })
for (let i = 0; i < 10; i++) {
  const r = await t.request('POST', `/v1/spaces/${sp2.slug}/audience-segments`, {
    token: editor2,
    body: {
      key: `s${i}`,
      label: `Segment ${i}`,
      priority: i,
      rules: [
        { type: 'country', operator: 'not_in', value: ['xx', 'yy', 'zz'] },
        { type: 'language', operator: 'neq', value: 'xx' },
        { type: 'cookie', key: 'segment', operator: 'eq', value: `s${i}` },
      ],
    },
  })
  if (r.status !== 201) throw new Error(`segment: ${r.status} ${r.text}`)
}
const created2 = await t.request('POST', `/v1/spaces/${sp2.slug}/stories`, {
  token: editor2,
  body: { name: 'Bench', slug: 'bench', content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: text }] } },
})
await t.request('POST', `/v1/spaces/${sp2.slug}/stories/${created2.body.data.uuid}/publish`, { token: editor2 })
const url2 = `http://localhost/v1/cdn/${sp2.slug}/stories/bench`
for (const h of [{}, { 'x-service-segment': 's3' }] as Record<string, string>[]) await (await t.app.fetch(new Request(url2, { headers: { 'x-forwarded-for': '10.0.0.3', ...h } }), peer)).arrayBuffer()
measure('segments: rules, no match', (i) => new Request(url2, { headers: { 'x-forwarded-for': xff(i) } }), (r) => t.app.fetch(r, peer))
measure('segments: X-Service-Segment', (i) => new Request(url2, { headers: { 'x-forwarded-for': xff(i), 'x-service-segment': 's3' } }), (r) => t.app.fetch(r, peer))
await t.close()
process.exit(0)
