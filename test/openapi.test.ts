import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'yaml'
import { type TestApp, testApp } from './helpers/app'

let t: TestApp
let doc: any

beforeAll(async () => {
  t = await testApp()
  const res = await t.request('GET', '/v1/openapi.json')
  expect(res.status).toBe(200)
  doc = res.body
}, 60_000)

afterAll(async () => {
  await t?.close()
})

/** Elysia's route path → the document's path (`:x` → `{x}`, a trailing `*` → `{path}`, no trailing slash). */
const docPath = (path: string) => {
  let p = path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
  if (p.length > 1) p = p.replace(/\/$/, '')
  return p.endsWith('/*') ? `${p.slice(0, -2)}/{path}` : p
}

describe('the OpenAPI description', () => {
  test('is OpenAPI 3.1 with version 0.1.0, and the same document in JSON and YAML, under /v1 and at the root', async () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/)
    expect(doc.info.version).toBe('0.1.0')
    const yaml = await t.request('GET', '/v1/openapi.yaml')
    expect(yaml.headers.get('content-type')).toContain('yaml')
    expect(parse(yaml.text)).toEqual(doc)
    expect((await t.request('GET', '/openapi.json')).body).toEqual(doc)
    expect(parse((await t.request('GET', '/openapi.yaml')).text)).toEqual(doc)
  })

  test('every route the app registers is described, with a success response schema and the error responses', () => {
    const routes = (t.app.app.routes as { method: string; path: string }[]).filter((r) => r.method !== 'OPTIONS' && r.method !== 'ALL')
    expect(routes.length).toBeGreaterThan(40)
    const missing: string[] = []
    for (const r of routes) {
      const op = doc.paths[docPath(r.path)]?.[r.method.toLowerCase()]
      if (!op) {
        missing.push(`${r.method} ${r.path}`)
        continue
      }
      const success = Object.entries(op.responses as Record<string, any>).filter(([code]) => code.startsWith('2'))
      expect({ route: `${r.method} ${r.path}`, success: success.length > 0 }).toEqual({ route: `${r.method} ${r.path}`, success: true })
      for (const [code, res] of success) {
        if (code === '204') continue
        // A body of some media type with a schema.
        const media = Object.values(res.content ?? {}) as { schema?: unknown }[]
        expect({ route: `${r.method} ${r.path} ${code}`, schema: media.some((m) => m.schema !== undefined) }).toEqual({
          route: `${r.method} ${r.path} ${code}`,
          schema: true,
        })
      }
      expect(op.responses['404']?.content?.['application/json']?.schema?.$ref).toBe('#/components/schemas/ErrorBody')
      expect(op.responses['500']).toBeDefined()
      expect(typeof op.summary).toBe('string')
      expect(op.tags?.length).toBeGreaterThan(0)
    }
    expect(missing).toEqual([])
  })

  test('guarded routes declare bearer security and 401/403; public ones none', () => {
    const me = doc.paths['/v1/auth/me'].get
    expect(me.security).toEqual([{ bearer: [] }])
    expect(me.responses['401']).toBeDefined()
    const patch = doc.paths['/v1/spaces/{space}'].patch
    expect(patch.security).toEqual([{ bearer: [] }])
    expect(patch.responses['403']).toBeDefined()
    expect(patch.responses['422']).toBeDefined()
    const read = doc.paths['/v1/cdn/{space}/stories/{path}'].get
    expect(read.security).toEqual([])
    expect(read.responses['429']).toBeDefined()
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(doc.components.schemas.ErrorBody.required).toEqual(['error', 'message'])
  })

  test('passes `redocly lint` with the recommended rules and no errors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cs-openapi-'))
    try {
      const file = join(dir, 'openapi.json')
      writeFileSync(file, JSON.stringify(doc))
      const p = Bun.spawn([join(import.meta.dir, '..', 'node_modules', '.bin', 'redocly'), 'lint', file, '--format=stylish'], {
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
      if (code !== 0) console.error(out, err)
      expect(code).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  test('is limited to 60 requests per minute per IP', async () => {
    const ip = '10.77.0.1'
    let last = 0
    for (let i = 0; i < 60; i++) last = (await t.request('GET', '/openapi.json', { ip })).status
    expect(last).toBe(200)
    const limited = await t.request('GET', '/v1/openapi.yaml', { ip })
    expect(limited.status).toBe(200) // the JSON and YAML documents count separately
    expect((await t.request('GET', '/openapi.json', { ip })).status).toBe(429)
  })

  test('the /docs page renders it with a script served from the service itself', async () => {
    const page = await t.request('GET', '/docs')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(page.text).toContain('/v1/openapi.json')
    const src = /<script src="([^"]+)"/.exec(page.text)![1]
    expect(src.startsWith('/')).toBe(true) // no CDN
    const script = await t.request('GET', src)
    expect(script.status).toBe(200)
    expect(script.text.length).toBeGreaterThan(100_000)
  })
})
