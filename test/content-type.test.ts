/**
 * A route that takes JSON acts on JSON only: a form, multipart or text body is refused with 415 in the shared error
 * shape, and nothing changes. The routes that declare another type (the asset upload: multipart; the beacon: text/plain
 * as navigator.sendBeacon sends it) keep taking it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

let t: TestApp
let token: string
let space: string
let storyUuid: string

beforeAll(async () => {
  t = await testApp()
  token = (await t.register()).token
  space = (await t.createSpace(token)).slug
  const c = await t.request('POST', `/v1/spaces/${space}/components`, { token, body: { name: 'hero', schema: { headline: { type: 'text' } } } })
  expect(c.status).toBe(201)
  const s = await t.request('POST', `/v1/spaces/${space}/stories`, {
    token,
    body: { name: 'Home', slug: 'home', content: { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: 'Hi' }] } },
  })
  expect(s.status).toBe(201)
  storyUuid = s.body.data.uuid
}, 60_000)

afterAll(async () => {
  await t?.close()
})

function multipart(fields: Record<string, string>) {
  const fd = new FormData()
  for (const [k, v] of Object.entries(fields)) fd.append(k, v)
  return fd
}

/** Bodies in other media types, each meaning `fields` to a naive reader. */
function nonJson(fields: Record<string, string>): { what: string; raw: RequestInit['body']; headers: Record<string, string> }[] {
  return [
    { what: 'multipart/form-data (FormData)', raw: multipart(fields), headers: {} },
    {
      what: 'multipart/form-data (hand-made)',
      raw: Object.entries(fields)
        .map(([k, v]) => `--B\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
        .join('')
        .concat('--B--\r\n'),
      headers: { 'Content-Type': 'multipart/form-data; boundary=B' },
    },
    { what: 'urlencoded', raw: new URLSearchParams(fields).toString(), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
    { what: 'text/plain', raw: JSON.stringify(fields), headers: { 'Content-Type': 'text/plain' } },
    { what: 'no content type', raw: new Blob([JSON.stringify(fields)]), headers: {} },
  ]
}

describe('JSON routes and other media types', () => {
  const cases = (): { method: string; path: string; fields: Record<string, string>; read: string; field: string }[] => [
    { method: 'PATCH', path: `/v1/spaces/${space}`, fields: { name: 'Changed by a form' }, read: `/v1/spaces/${space}`, field: 'name' },
    { method: 'PUT', path: `/v1/spaces/${space}/stories/${storyUuid}`, fields: { name: 'Changed by a form' }, read: `/v1/spaces/${space}/stories/${storyUuid}`, field: 'name' },
    { method: 'PUT', path: `/v1/spaces/${space}/components/hero`, fields: { display_name: 'Changed by a form' }, read: `/v1/spaces/${space}/components/hero`, field: 'display_name' },
  ]

  test('PATCH a Space, PUT a Story or a component in any other media type: 415 unsupported_media_type, nothing changes', async () => {
    for (const c of cases()) {
      const before = await t.request('GET', c.read, { token })
      expect(before.status).toBe(200)
      for (const b of nonJson(c.fields)) {
        const r = await t.request(c.method, c.path, { token, raw: b.raw, headers: b.headers })
        expect({ route: `${c.method} ${c.path}`, what: b.what, status: r.status, error: r.body?.error }).toEqual({
          route: `${c.method} ${c.path}`,
          what: b.what,
          status: 415,
          error: 'unsupported_media_type',
        })
        expect(typeof r.body.message).toBe('string')
      }
      const after = await t.request('GET', c.read, { token })
      expect(after.body.data).toEqual(before.body.data)
      // The same change as JSON is taken.
      const ok = await t.request(c.method, c.path, { token, body: c.fields })
      expect(ok.status).toBe(200)
      expect(ok.body.data[c.field]).toBe('Changed by a form')
    }
  })

  test('the asset upload still takes multipart/form-data, and refuses JSON', async () => {
    const fd = new FormData()
    fd.append('file', new Blob(['%PDF-1.4\n%\u00e2\u00e3\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n'], { type: 'application/pdf' }), 'doc.pdf')
    const r = await t.request('POST', `/v1/spaces/${space}/assets`, { token, raw: fd })
    expect(r.status).toBe(201)
    expect(r.body.data.content_type).toBe('application/pdf')
    const json = await t.request('POST', `/v1/spaces/${space}/assets`, { token, body: { file: 'x' } })
    expect(json.status).toBe(415)
    expect(json.body.error).toBe('unsupported_media_type')
  })

  test('the beacon still takes text/plain (navigator.sendBeacon), also on the Elysia path', async () => {
    const raw = JSON.stringify({ story_uuid: storyUuid })
    const r = await t.request('POST', `/v1/cdn/${space}/_beacon`, { raw, headers: { 'Content-Type': 'text/plain;charset=UTF-8' } })
    expect(r.status).toBe(204)
    const res = await t.app.app.handle(
      new Request(`http://localhost/v1/cdn/${space}/_beacon`, { method: 'POST', body: raw, headers: { 'Content-Type': 'text/plain;charset=UTF-8' } }),
    )
    expect(res.status).toBe(204)
  })
})
