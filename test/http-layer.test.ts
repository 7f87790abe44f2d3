// The HTTP layer seen from a raw socket against a listening server: what reaches the routes whatever the Host header
// says, and the answers made before or around any route (limits) in the shared error shape.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import net from 'node:net'
import type { Server } from 'bun'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

let t: TestApp
let server: Server<undefined>
let token: string
let space: string

beforeAll(async () => {
  t = await testApp()
  server = t.app.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 20, idleTimeout: 30 })
  const owner = await t.register()
  token = owner.token
  space = (await t.createSpace(token)).slug
})

afterAll(async () => {
  server?.stop(true)
  await t?.close()
})

interface RawResponse {
  status: number
  headers: Map<string, string>
  body: string
}

/** Sends `request` verbatim on a new connection and reads the answer until the server closes it. */
function raw(request: string | Uint8Array): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1', () => socket.write(request))
    const chunks: Buffer[] = []
    socket.on('data', (c) => chunks.push(c))
    socket.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? socket.destroy() : reject(err)))
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const split = text.indexOf('\r\n\r\n')
      const head = (split === -1 ? text : text.slice(0, split)).split('\r\n')
      const headers = new Map<string, string>()
      for (const line of head.slice(1)) {
        const i = line.indexOf(':')
        if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim())
      }
      resolve({ status: Number(head[0]?.split(' ')[1] ?? 0), headers, body: split === -1 ? '' : text.slice(split + 4) })
    })
  })
}

const get = (path: string, host: string, extra = '') =>
  raw(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}Connection: close\r\n\r\n`)

describe('Host header', () => {
  // Internal names behind a proxy or in a container network are short; the path must be found after any of them.
  const HOSTS = ['web', 'cms', 'a.b', 'x:80', 'a', '[::1]:8080', '127.0.0.1', 'localhost', 'cms.internal', 'a:1']

  test('every host form reaches the routes: /v1/version answers 200', async () => {
    for (const host of HOSTS) {
      const res = await get('/v1/version', host)
      expect({ host, status: res.status }).toEqual({ host, status: 200 })
      expect(JSON.parse(res.body).service.version).toBeString()
    }
  })

  test('every host form reaches a management route with its path parameters and query', async () => {
    for (const host of HOSTS) {
      const res = await get(`/v1/spaces/${space}/stories?per_page=5`, host, `Authorization: Bearer ${token}\r\n`)
      expect({ host, status: res.status }).toEqual({ host, status: 200 })
      expect(JSON.parse(res.body).data).toBeArray()
    }
  })

  test('an unknown path is still 404 under a short host', async () => {
    for (const host of ['a', 'web']) {
      const res = await get('/v1/no-such-route', host)
      expect(res.status).toBe(404)
      expect(JSON.parse(res.body)).toEqual({ error: 'not_found', message: 'No such route.' })
    }
  })
})
