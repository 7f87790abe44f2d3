// What many and slow clients do to one instance (a real `serve` process on Postgres):
// - 10,000 idle keep-alive connections (each made one request, then went quiet) beside normal traffic: every read
//   still answers, the memory each idle connection costs is printed, and the idle timeout closes them;
// - slow consumers: 200 `/live` event streams that are never read and 50 downloads of an 8 MB asset read a little now
//   and then, then not at all: the server's memory stays bounded (printed) and other requests are answered meanwhile.
// Latency figures are printed, never asserted (the machine may be loaded). Runs on the Postgres suite.
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import net from 'node:net'
import { BOUND_MS, call, fleetEnv, freshDatabase, pct, type Proc, seedSite, serverUrl, sleep, startServe, stopAll, waitFor } from './procs'

setDefaultTimeout(60_000)

const IDLE = Number(process.env.FLEET_IDLE_CONNECTIONS ?? 10_000)
const procs: Proc[] = []
const cleanups: (() => Promise<void> | void)[] = []
const sockets: net.Socket[] = []

afterAll(async () => {
  for (const s of sockets) s.destroy()
  await stopAll(procs)
  for (const c of cleanups.reverse()) await c()
})

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

/** `n` reads through fresh requests, 16 at a time; their latencies in ms. */
async function reads(base: string, n: number, path: string): Promise<{ ms: number[]; statuses: Set<number> }> {
  const ms: number[] = []
  const statuses = new Set<number>()
  let next = 0
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < n) {
        next++
        const t0 = performance.now()
        const r = await call(base, 'GET', path)
        ms.push(performance.now() - t0)
        statuses.add(r.status)
      }
    }),
  )
  return { ms, statuses }
}

/** A keep-alive connection that made one request and got its answer; then it stays open and says nothing. */
function idleConnection(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /v1/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'))
    sockets.push(socket)
    let seen = ''
    const onData = (d: Buffer) => {
      seen += d.toString('latin1')
      if (!seen.includes('\r\n\r\n')) return
      socket.off('data', onData)
      if (!seen.startsWith('HTTP/1.1 200')) reject(new Error(seen.slice(0, 100)))
      else resolve(socket)
    }
    socket.on('data', onData)
    socket.on('error', reject)
  })
}

describe.skipIf(!serverUrl)('many and slow clients on one instance', () => {
  test('10,000 idle keep-alive connections: reads keep answering, and the idle timeout closes them', async () => {
    const db = await freshDatabase('cs_idle')
    cleanups.push(() => db.drop())
    const server = await startServe(fleetEnv(db.url, { HTTP_IDLE_TIMEOUT: '20' }))
    procs.push(server)
    const { token, stories } = await seedSite(server.base, 5)
    for (const s of stories) expect((await call(server.base, 'POST', `/spaces/site/stories/${s.uuid}/publish`, { token })).status).toBe(200)

    const quiet = await reads(server.base, 2000, '/cdn/site/stories/page-1')
    expect([...quiet.statuses]).toEqual([200])
    const before = rssMb(server.child.pid)
    for (let i = 0; i < IDLE; i += 500) {
      await Promise.all(Array.from({ length: Math.min(500, IDLE - i) }, () => idleConnection(server.port)))
    }
    const open = sockets.filter((s) => !s.destroyed).length
    expect(open).toBe(IDLE)
    const busy = await reads(server.base, 2000, '/cdn/site/stories/page-1')
    expect([...busy.statuses]).toEqual([200])
    const after = rssMb(server.child.pid)
    console.log(
      `idle connections: ${IDLE} open; reads p50/p99 ${pct(quiet.ms, 50).toFixed(1)}/${pct(quiet.ms, 99).toFixed(1)} ms without, ` +
        `${pct(busy.ms, 50).toFixed(1)}/${pct(busy.ms, 99).toFixed(1)} ms with them; RSS ${before.toFixed(0)} → ${after.toFixed(0)} MB ` +
        `(${(((after - before) * 1024 * 1024) / IDLE).toFixed(0)} bytes per idle connection)`,
    )
    // HTTP_IDLE_TIMEOUT=20: the server closes connections that say nothing for 20 s.
    await waitFor('the idle connections closed by the server', async () => (sockets.every((s) => s.destroyed || s.readyState === 'closed' || s.readableEnded) ? true : undefined))
    sockets.length = 0
  }, 4 * BOUND_MS)

  test('slow consumers: 200 unread event streams and 50 slow downloads keep memory bounded and others served', async () => {
    const db = await freshDatabase('cs_slow')
    cleanups.push(() => db.drop())
    // One token opens all 200 streams: the per-principal cap (16 by default) is lifted for this measurement of memory.
    const server = await startServe(fleetEnv(db.url, { LIVE_STREAMS_PER_PRINCIPAL: '1000' }))
    procs.push(server)
    const { token, stories } = await seedSite(server.base, 2)
    for (const s of stories) expect((await call(server.base, 'POST', `/spaces/site/stories/${s.uuid}/publish`, { token })).status).toBe(200)
    const SIZE = 8 * 1024 * 1024
    const form = new FormData()
    const bytes = new Uint8Array(SIZE)
    for (let at = 0; at < SIZE; at += 65_536) crypto.getRandomValues(bytes.subarray(at, at + 65_536))
    bytes.set(new TextEncoder().encode('%PDF-1.7\n')) // a PDF by its magic number (the upload checks the bytes)
    form.append('file', new Blob([bytes], { type: 'application/pdf' }), 'big.pdf')
    const up = await call(server.base, 'POST', '/spaces/site/assets', { token, raw: form })
    expect(up.status).toBe(201)
    const uuid = up.body.data.uuid as string
    const base = rssMb(server.child.pid)

    // 200 live streams whose readers stop after the first bytes.
    const live = `/v1/spaces/site/stories/${stories[0].uuid}/live`
    await Promise.all(
      Array.from(
        { length: 200 },
        () =>
          new Promise<void>((resolve, reject) => {
            const socket = net.connect(server.port, '127.0.0.1', () =>
              socket.write(`GET ${live} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`),
            )
            sockets.push(socket)
            socket.once('data', (d) => {
              if (!d.toString('latin1').startsWith('HTTP/1.1 200')) reject(new Error(d.toString('latin1').slice(0, 100)))
              socket.pause()
              resolve()
            })
            socket.on('error', reject)
          }),
      ),
    )
    // 50 downloads whose readers take 1 MB, then stop reading for good (the connection stays open).
    let downloaded = 0
    const downloads = Array.from(
      { length: 50 },
      () =>
        new Promise<void>((resolve, reject) => {
          const socket = net.connect(server.port, '127.0.0.1', () => socket.write(`GET /v1/cdn/site/assets/${uuid} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`))
          sockets.push(socket)
          let mine = 0
          socket.on('data', (d) => {
            if (mine === 0 && !d.toString('latin1').startsWith('HTTP/1.1 200')) reject(new Error(d.toString('latin1').slice(0, 100)))
            mine += d.length
            downloaded += d.length
            if (mine >= 1_000_000) {
              socket.pause()
              resolve()
            }
          })
          socket.on('error', reject)
        }),
    )
    // Meanwhile, publishes reach every stream (nobody reads them) and other requests are answered.
    let peak = base
    const others: number[] = []
    const t0 = Date.now()
    while (Date.now() - t0 < 3000) {
      const t = performance.now()
      const r = await call(server.base, 'GET', '/cdn/site/stories/page-1')
      others.push(performance.now() - t)
      expect(r.status).toBe(200)
      expect((await call(server.base, 'POST', `/spaces/site/stories/${stories[0].uuid}/publish`, { token })).status).toBe(200)
      peak = Math.max(peak, rssMb(server.child.pid))
    }
    await Promise.all(downloads)
    // What the server holds for the stalled readers after a while is what it keeps, not garbage in flight.
    await sleep(3000)
    const held = rssMb(server.child.pid)
    console.log(
      `slow consumers: 200 unread streams + 50 stalled downloads of 8 MB (${(downloaded / 1e6).toFixed(1)} MB read); RSS ${base.toFixed(0)} MB → ` +
        `peak ${peak.toFixed(0)} MB, ${held.toFixed(0)} MB held while they stall; ${others.length} other requests p50/p99 ` +
        `${pct(others, 50).toFixed(1)}/${pct(others, 99).toFixed(1)} ms`,
    )
    expect(downloaded).toBeGreaterThan(0)
    // Bounded: a stalled download holds about one 1 MiB chunk row, not the asset (50 copies would be 400 MB).
    expect(held - base).toBeLessThan(150)
  }, 4 * BOUND_MS)
})
