import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { parse } from 'yaml'
import { type RequestOptions, type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

let t: TestApp
let doc: any

beforeAll(async () => {
  // Private webhook targets allowed: the flow below subscribes a local URL (no network needed).
  t = await testApp({ outboundAllowPrivate: true })
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

  test('the preview check declares its preview-token security and its 401, as it answers', async () => {
    const op = doc.paths['/v1/cdn/{space}/preview'].get
    expect(op.security).toEqual([{ preview: [] }])
    expect(doc.components.securitySchemes.preview).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(op.responses['401'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorBody')
    expect(op.responses['401'].description).toContain('preview token')
    // What the description says is what the route does: no token, 401.
    const owner = await t.register()
    const space = (await t.createSpace(owner.token)).slug
    const r = await t.request('GET', `/v1/cdn/${space}/preview`)
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 401, error: 'unauthorized' })
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

  test('the /docs page runs only its own script and cannot be framed', async () => {
    const page = await t.request('GET', '/docs')
    const csp = page.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).toContain("base-uri 'none'")
    expect(csp).not.toContain('unsafe-eval')
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
  })
})

const DOC_ID = 'https://content-service.invalid/openapi.json'
const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')

/** Ajv (JSON Schema 2020-12, formats checked) holding the document, so `#/components/...` references resolve. */
function ajvOf(document: unknown) {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addSchema(document as object, DOC_ID)
  return ajv
}

/** Every schema of the document, with its JSON pointer: components, parameters, request bodies, responses. */
function schemasOf(document: any): { at: string; schema: unknown }[] {
  const out: { at: string; schema: unknown }[] = []
  for (const [name, schema] of Object.entries(document.components.schemas ?? {})) out.push({ at: `/${pointer('components', 'schemas', name)}`, schema })
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      ;(op.parameters ?? []).forEach((p: any, i: number) => out.push({ at: `/${pointer('paths', path, method, 'parameters', String(i), 'schema')}`, schema: p.schema }))
      for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) {
        out.push({ at: `/${pointer('paths', path, method, 'requestBody', 'content', type, 'schema')}`, schema: media.schema })
      }
      for (const [status, res] of Object.entries<any>(op.responses ?? {})) {
        for (const [type, media] of Object.entries<any>(res.content ?? {})) {
          out.push({ at: `/${pointer('paths', path, method, 'responses', status, 'content', type, 'schema')}`, schema: media.schema })
        }
      }
    }
  }
  return out
}

describe('the OpenAPI description serves generated clients', () => {
  test('every operation has a unique, readable operationId derived from its method and path', async () => {
    const ids: string[] = []
    for (const item of Object.values<any>(doc.paths)) for (const op of Object.values<any>(item)) ids.push(op.operationId)
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]*$/.test(id))).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    const id = (path: string, method: string) => doc.paths[path][method].operationId
    expect(id('/v1/spaces/{space}/stories', 'get')).toBe('listStories')
    expect(id('/v1/spaces/{space}/stories', 'post')).toBe('createStory')
    expect(id('/v1/spaces/{space}/stories/{uuid}', 'get')).toBe('getStory')
    expect(id('/v1/spaces/{space}/stories/{uuid}', 'put')).toBe('updateStory')
    expect(id('/v1/spaces/{space}/stories/{uuid}/publish', 'post')).toBe('publishStory')
    expect(id('/v1/spaces/{space}/components/{name}', 'delete')).toBe('deleteComponent')
    expect(id('/v1/cdn/{space}/stories/{path}', 'get')).toBe('getPublishedStory')
    expect(id('/v1/cdn/{space}/stories', 'get')).toBe('listPublishedStories')
    expect(id('/v1/cdn/{space}/changes', 'get')).toBe('listStoryChanges')
    // Stable: the same document built again names every operation alike.
    const again = (await t.request('GET', '/openapi.json')).body
    for (const [path, item] of Object.entries<any>(doc.paths)) for (const [m, op] of Object.entries<any>(item)) expect(again.paths[path][m].operationId).toBe(op.operationId)
  })

  test('the shapes clients name are named schemas: Story, StoryContent, Block, Asset, Component, ErrorBody, ...', () => {
    const schemas = doc.components.schemas
    for (const name of ['Story', 'PublicStory', 'StoryContent', 'Block', 'Asset', 'Component', 'Space', 'ErrorBody', 'PublicStoryList', 'StoryChanges']) {
      expect(schemas[name]).toBeDefined()
    }
    const ok = (path: string, method: string) => doc.paths[path][method].responses['200'].content['application/json'].schema
    expect(ok('/v1/spaces/{space}/stories/{uuid}', 'get').properties.data).toEqual({ $ref: '#/components/schemas/Story' })
    expect(schemas.Story.properties.content).toEqual({ $ref: '#/components/schemas/StoryContent' })
    expect(schemas.StoryContent.properties.blocks.items).toEqual({ $ref: '#/components/schemas/Block' })
    expect(ok('/v1/cdn/{space}/stories/{path}', 'get').properties.data).toEqual({ $ref: '#/components/schemas/PublicStory' })
    expect(ok('/v1/cdn/{space}/stories', 'get')).toEqual({ $ref: '#/components/schemas/PublicStoryList' })
  })

  test('GET /v1/version names the image widths transform URLs resolve', async () => {
    const v = await t.request('GET', '/v1/version')
    expect(v.body.images).toEqual({ widths: t.config.imageWidths, formats: ['webp', 'avif', 'jpg', 'png'] })
    expect(v.body.components.sdk_js.npm).toBe('@content-service/sdk')
  })

  test('every operation that takes a body publishes its schema (JSON; multipart for the upload)', () => {
    const ops = Object.entries<any>(doc.paths).flatMap(([path, item]) => Object.entries<any>(item).map(([method, op]) => ({ at: `${method.toUpperCase()} ${path}`, op })))
    const withBody = ops.filter((o) => o.op.requestBody)
    expect(withBody.length).toBeGreaterThan(30)
    const empty = withBody.filter((o) => !Object.values<any>(o.op.requestBody.content ?? {}).some((m) => m.schema && typeof m.schema === 'object'))
    expect(empty.map((o) => o.at)).toEqual([])
    const json = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json']?.schema
    expect(json('/v1/auth/register', 'post').required).toEqual(expect.arrayContaining(['email', 'password']))
    expect(Object.keys(json('/v1/spaces/{space}', 'patch').properties)).toContain('name')
    expect(json('/v1/spaces/{space}/stories/{uuid}', 'put').properties.content).toBeDefined()
    expect(json('/v1/graphql', 'post').properties.query).toBeDefined()
    // JSON routes take JSON only: no form types that the server would refuse with 415.
    expect(Object.keys(doc.paths['/v1/spaces/{space}/components/{name}'].put.requestBody.content)).toEqual(['application/json'])
    expect(Object.keys(doc.paths['/v1/spaces/{space}/assets'].post.requestBody.content)).toEqual(['multipart/form-data'])
    expect(doc.paths['/v1/spaces/{space}/assets'].post.requestBody.content['multipart/form-data'].schema.required).toEqual(['file'])
  })

  test('integers in paths and queries are published as integers with their bounds, and still checked strictly', async () => {
    const param = (path: string, method: string, name: string) => doc.paths[path][method].parameters.find((p: any) => p.name === name)?.schema
    expect(param('/v1/spaces/{space}/stories', 'get', 'per_page')).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 })
    expect(param('/v1/spaces/{space}/stories', 'get', 'page')).toMatchObject({ type: 'integer', minimum: 1 })
    expect(param('/v1/spaces/{space}/stories/{uuid}/versions/{version_no}', 'get', 'version_no')).toMatchObject({ type: 'integer', minimum: 1 })
    expect(param('/v1/spaces/{space}/webhooks/{id}', 'get', 'id')).toMatchObject({ type: 'integer', minimum: 1 })
    expect(param('/v1/spaces/{space}/invitations/{id}', 'delete', 'id')).toMatchObject({ type: 'integer', minimum: 1, maximum: 2_147_483_647 })
    expect(param('/v1/spaces/{space}/invitations/{id}/resend', 'post', 'id')).toMatchObject({ type: 'integer', minimum: 1 })
    // No parameter is an integer in disguise (a string of digits by pattern): neither by the pattern's look, nor by
    // what it accepts (digits, and no word).
    const digitsOnly = (pattern: string) => {
      const re = new RegExp(pattern)
      return (re.test('1') || re.test('12')) && !['a', 'me', 'abc', 'A1', '1a', 'x'].some((w) => re.test(w))
    }
    const disguised: string[] = []
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        for (const p of op.parameters ?? []) {
          if (p.schema?.type !== 'string' || typeof p.schema.pattern !== 'string') continue
          if ((/^\^\(\?:(?:\[?\d|\\d)/.test(p.schema.pattern) && !/[a-z]-[a-z]/.test(p.schema.pattern)) || digitsOnly(p.schema.pattern)) disguised.push(`${method} ${path} ${p.name}`)
        }
      }
    }
    expect(disguised).toEqual([])
    const owner = await t.register()
    const space = (await t.createSpace(owner.token)).slug
    for (const bad of ['1e3', '%2B1', '1.0', '0', '101', '01']) {
      const r = await t.request('GET', `/v1/spaces/${space}/stories?per_page=${bad}`, { token: owner.token })
      expect({ bad, status: r.status, field: Object.keys(r.body.errors ?? {}) }).toEqual({ bad, status: 422, field: ['per_page'] })
    }
    const ok = await t.request('GET', `/v1/spaces/${space}/stories?per_page=20`, { token: owner.token })
    expect(ok.status).toBe(200)
    expect(ok.body.meta.per_page).toBe(20)
  })

  test('Ajv (JSON Schema 2020-12) accepts and compiles every schema of the document', () => {
    const ajv = ajvOf(doc)
    const invalid: string[] = []
    const all = schemasOf(doc)
    expect(all.length).toBeGreaterThan(200)
    for (const { at, schema } of all) {
      if (!ajv.validateSchema(schema as object)) invalid.push(`${at}: ${ajv.errorsText(ajv.errors)}`)
      try {
        ajv.getSchema(`${DOC_ID}#${at}`)
      } catch (err) {
        invalid.push(`${at}: ${String(err).slice(0, 200)}`)
      }
    }
    expect(invalid).toEqual([])
    expect(JSON.stringify(doc)).not.toContain('"$id":"#')
  })

  test('each operation lists the error statuses it can answer, in the shared error shape', () => {
    const op = (path: string, method: string) => doc.paths[path][method]
    const isError = (r: any) => r?.content?.['application/json']?.schema?.$ref === '#/components/schemas/ErrorBody'
    // Writes that can conflict.
    for (const [path, method, code] of [
      ['/v1/auth/register', 'post', 'email_taken'],
      ['/v1/spaces', 'post', 'slug_taken'],
      ['/v1/spaces/{space}/locales', 'post', 'locale_exists'],
      ['/v1/spaces/{space}/stories', 'post', 'path_taken'],
      ['/v1/spaces/{space}/stories/{uuid}', 'put', 'version_conflict'],
      ['/v1/spaces/{space}/components', 'post', 'component_exists'],
      ['/v1/spaces/{space}/components/{name}', 'delete', 'component_in_use'],
      ['/v1/spaces/{space}/forms', 'post', 'slug_taken'],
      ['/v1/onboard', 'post', 'email_taken'],
      ['/v1/onboard', 'post', 'slug_taken'],
      ['/v1/pitch-invitees', 'post', 'pitch_invitee_exists'],
      ['/v1/pitch/{slug}/test-account', 'post', 'already_provisioned'],
    ] as const) {
      const r = op(path, method).responses['409']
      expect({ at: `${method} ${path}`, documented: isError(r), code: r?.description?.includes(`\`${code}\``) }).toEqual({ at: `${method} ${path}`, documented: true, code: true })
    }
    // Guards: 401 when authenticated, 403 and 404 on Space routes; bodies: 400, 413, 415, 422; limits: 429.
    const patch = op('/v1/spaces/{space}', 'patch')
    for (const status of ['400', '401', '403', '404', '409', '413', '415', '422', '500']) expect({ status, ok: isError(patch.responses[status]) }).toEqual({ status, ok: true })
    expect(isError(op('/v1/auth/login', 'post').responses['401'])).toBe(true)
    expect(op('/v1/auth/login', 'post').responses['401'].description).toContain('invalid_credentials')
    expect(isError(op('/v1/auth/register', 'post').responses['429'])).toBe(true)
    // Reads neither conflict nor take a body.
    const list = op('/v1/spaces/{space}/stories', 'get')
    for (const status of ['409', '413', '415']) expect(list.responses[status]).toBeUndefined()
    // Every error response of every operation is the shared shape.
    const odd: string[] = []
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, o] of Object.entries<any>(item)) {
        for (const [status, r] of Object.entries<any>(o.responses)) if (Number(status) >= 400 && r.content && !isError(r)) odd.push(`${method} ${path} ${status}`)
        if (o.security?.length) expect({ at: `${method} ${path}`, has401: isError(o.responses['401']) }).toEqual({ at: `${method} ${path}`, has401: true })
      }
    }
    expect(odd).toEqual([])
  })

  test('a client generated by openapi-typescript types a program calling a dozen operations (tsc --strict)', async () => {
    const root = join(import.meta.dir, '..')
    const dir = mkdtempSync(join(tmpdir(), 'cs-openapi-client-'))
    try {
      writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc))
      const gen = Bun.spawn([process.execPath, join(root, 'node_modules/openapi-typescript/bin/cli.js'), join(dir, 'openapi.json'), '-o', join(dir, 'api.d.ts')], {
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [genOut, genErr, genCode] = await Promise.all([new Response(gen.stdout).text(), new Response(gen.stderr).text(), gen.exited])
      if (genCode !== 0) console.error(genOut, genErr)
      expect(genCode).toBe(0)
      writeFileSync(join(dir, 'client.ts'), CLIENT_PROGRAM)
      const tsc = Bun.spawn(
        [process.execPath, join(root, 'node_modules/typescript/bin/tsc'), '--strict', '--noEmit', '--target', 'es2022', '--module', 'esnext', '--moduleResolution', 'bundler', '--lib', 'es2022,dom', join(dir, 'client.ts')],
        { stdout: 'pipe', stderr: 'pipe', cwd: dir },
      )
      const [out, err, code] = await Promise.all([new Response(tsc.stdout).text(), new Response(tsc.stderr).text(), tsc.exited])
      expect(`${out}${err}`).toBe('')
      expect(code).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  test('real responses of the main flows match the documented schema of their status', async () => {
    const ajv = ajvOf(doc)
    const templates = Object.keys(doc.paths).map((p) => ({
      path: p,
      params: (p.match(/\{/g) ?? []).length,
      re: new RegExp(`^${p.replace(/\{path\}$/, '.+').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }))
    const problems: string[] = []
    const seen = new Set<string>()
    const call = async (method: string, url: string, opts: RequestOptions = {}) => {
      const r = await t.request(method, url, opts)
      const bare = url.split('?')[0]
      const template = templates
        .filter((x) => x.re.test(bare) && doc.paths[x.path][method.toLowerCase()])
        .sort((a, b) => a.params - b.params)[0]?.path
      const where = `${method} ${template ?? bare} ${r.status}`
      seen.add(where)
      if (!template) {
        problems.push(`${where}: no such path in the document`)
        return r
      }
      const res = doc.paths[template][method.toLowerCase()].responses[String(r.status)]
      if (!res) {
        problems.push(`${where}: status not documented (${r.text.slice(0, 120)})`)
        return r
      }
      if (r.status === 204 || r.status === 304) return r
      if (!(r.headers.get('content-type') ?? '').includes('json')) return r
      if (!res.content?.['application/json']) {
        problems.push(`${where}: JSON answered, no JSON schema documented`)
        return r
      }
      const validate = ajv.getSchema(`${DOC_ID}#/${pointer('paths', template, method.toLowerCase(), 'responses', String(r.status), 'content', 'application/json', 'schema')}`)!
      if (!validate(r.body)) problems.push(`${where}: ${ajv.errorsText(validate.errors)} in ${r.text.slice(0, 200)}`)
      return r
    }

    // Auth
    const email = `flow-${Math.random().toString(36).slice(2, 8)}@example.com`
    const reg = await call('POST', '/v1/auth/register', { body: { email, password: 'correct horse battery staple', name: 'Flow' } })
    expect([201, 202]).toContain(reg.status) // 201: the service's first account
    await call('POST', '/v1/auth/register', { body: { email, password: 'correct horse battery staple', name: 'Flow' } }) // 202, the same for a taken address
    await call('POST', '/v1/auth/register', { body: { email: 'not an address', password: 'x' } }) // 422
    await call('POST', '/v1/auth/register/confirm', { body: { token: 'A'.repeat(43) } }) // 422
    const login = await call('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery staple' } })
    expect(login.status).toBe(200)
    await call('POST', '/v1/auth/login', { body: { email, password: 'wrong password here' } }) // 401
    const token = login.body.data?.token ?? reg.body.data?.token
    expect(typeof token).toBe('string')
    await call('GET', '/v1/auth/me', { token })
    await call('GET', '/v1/auth/me') // 401

    // Spaces
    const space = `flow-${Math.random().toString(36).slice(2, 8)}`
    expect((await call('POST', '/v1/spaces', { token, body: { slug: space, name: 'Flow', default_lang: 'en', locales: ['en'] } })).status).toBe(201)
    await call('POST', '/v1/spaces', { token, body: { slug: space, name: 'Again' } }) // 409
    await call('GET', '/v1/spaces', { token })
    await call('GET', `/v1/spaces/${space}`, { token })
    await call('GET', '/v1/spaces/no-such-space', { token }) // 404
    await call('PATCH', `/v1/spaces/${space}`, { token, body: { name: 'Flow 2' } })
    await call('PATCH', `/v1/spaces/${space}`, { token, raw: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }) // 415
    await call('POST', `/v1/spaces/${space}/tokens`, { token, body: { name: 'viewer', role: 'viewer' } })
    await call('GET', `/v1/spaces/${space}/tokens`, { token })
    await call('POST', `/v1/spaces/${space}/locales`, { token, body: { code: 'de', fallback: 'en' } })
    await call('POST', `/v1/spaces/${space}/locales`, { token, body: { code: 'de', fallback: 'en' } }) // 409
    await call('GET', `/v1/spaces/${space}/locales`, { token })

    // Components and Stories
    expect((await call('POST', `/v1/spaces/${space}/components`, { token, body: { name: 'hero', schema: { headline: { type: 'text' } } } })).status).toBe(201)
    await call('POST', `/v1/spaces/${space}/components`, { token, body: { name: 'hero', schema: { headline: { type: 'text' } } } }) // 409
    await call('GET', `/v1/spaces/${space}/components`, { token })
    await call('GET', `/v1/spaces/${space}/components/hero`, { token })
    await call('PUT', `/v1/spaces/${space}/components/hero`, { token, body: { display_name: 'Hero', schema: { headline: { type: 'text' } } } })
    const content = { type: 'doc', blocks: [{ component: 'hero', _uid: 'h1', headline: 'Hello' }] }
    const story = await call('POST', `/v1/spaces/${space}/stories`, { token, body: { name: 'Home', slug: 'home', content } })
    expect(story.status).toBe(201)
    const uuid = story.body.data.uuid
    await call('POST', `/v1/spaces/${space}/stories`, { token, body: { name: 'Home', slug: 'home', content } }) // 409
    await call('POST', `/v1/spaces/${space}/stories`, { token, body: { name: '', slug: 'Bad Slug', content } }) // 422
    await call('GET', `/v1/spaces/${space}/stories?per_page=20`, { token })
    await call('GET', `/v1/spaces/${space}/stories?per_page=1e3`, { token }) // 422
    await call('GET', `/v1/spaces/${space}/stories/tree`, { token })
    await call('GET', `/v1/spaces/${space}/stories/${uuid}`, { token })
    await call('PUT', `/v1/spaces/${space}/stories/${uuid}`, { token, body: { name: 'Home page', content } })
    await call('POST', `/v1/spaces/${space}/stories/${uuid}/publish`, { token })
    await call('GET', `/v1/spaces/${space}/stories/${uuid}/versions`, { token })
    await call('GET', `/v1/spaces/${space}/stories/${uuid}/versions/1`, { token })
    await call('POST', `/v1/spaces/${space}/stories/bulk`, { token, body: { action: 'publish', uuids: [uuid] } })

    // The public read
    await call('GET', `/v1/cdn/${space}/stories/home`)
    await call('GET', `/v1/cdn/${space}/stories/no-such-story`) // 404
    await call('GET', `/v1/cdn/${space}/search?q=hello`)
    await call('POST', '/v1/graphql', { body: { query: `{ story(space: "${space}", path: "home") { uuid } }` } })

    // Assets
    const fd = new FormData()
    fd.append('file', new Blob(['%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n'], { type: 'application/pdf' }), 'doc.pdf')
    const asset = await call('POST', `/v1/spaces/${space}/assets`, { token, raw: fd })
    expect(asset.status).toBe(201)
    await call('POST', `/v1/spaces/${space}/assets`, { token, body: { file: 'x' } }) // 415
    await call('GET', `/v1/spaces/${space}/assets`, { token })
    await call('PATCH', `/v1/spaces/${space}/assets/${asset.body.data.uuid ?? asset.body.data.id}`, { token, body: { filename: 'renamed.pdf' } })

    // Webhooks
    const hook = await call('POST', `/v1/spaces/${space}/webhooks`, { token, body: { label: 'Hook', url: 'http://127.0.0.1:9/hook', events: ['story.published'] } })
    expect(hook.status).toBe(201)
    await call('GET', `/v1/spaces/${space}/webhooks`, { token })
    await call('GET', `/v1/spaces/${space}/webhooks/${hook.body.data.id}`, { token })
    await call('PATCH', `/v1/spaces/${space}/webhooks/${hook.body.data.id}`, { token, body: { label: 'Hook 2' } })
    await call('GET', `/v1/spaces/${space}/webhooks/${hook.body.data.id}/deliveries`, { token })

    // Forms
    const fields = [{ key: 'name', type: 'text', label: 'Name', required: true }]
    const form = await call('POST', `/v1/spaces/${space}/forms`, { token, body: { slug: 'contact', label: 'Contact', fields } })
    expect(form.status).toBe(201)
    await call('POST', `/v1/spaces/${space}/forms`, { token, body: { slug: 'contact', label: 'Contact', fields } }) // 409
    await call('GET', `/v1/spaces/${space}/forms`, { token })
    await call('POST', `/v1/cdn/${space}/forms/contact`, { body: { data: { name: 'Ada' } } })
    await call('POST', `/v1/cdn/${space}/forms/contact`, { body: { data: {} } }) // 422
    await call('GET', `/v1/spaces/${space}/forms/${form.body.data.uuid}/submissions`, { token })

    // Deletes
    await call('DELETE', `/v1/spaces/${space}/components/hero`, { token }) // 409: in use
    await call('DELETE', `/v1/spaces/${space}/webhooks/${hook.body.data.id}`, { token })

    expect(problems).toEqual([])
    expect(seen.size).toBeGreaterThan(50)
    for (const status of [201, 204, 401, 404, 409, 415, 422]) expect([...seen].some((s) => s.endsWith(` ${status}`))).toBe(true)
  }, 120_000)
})

/** A program a client author would write against the generated types: a tiny typed fetch over `paths`. */
const CLIENT_PROGRAM = `import type { paths } from './api'

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete'
type Op<P extends keyof paths, M extends Method> = paths[P][M]
type Init<O> = (O extends { parameters: infer X } ? { params: X } : {}) &
  (O extends { requestBody: { content: { 'application/json': infer B } } } ? { body: B } : O extends { requestBody?: { content: { 'application/json': infer B } } } ? { body?: B } : {})
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : never
type Ok<O> = O extends { responses: infer R } ? JsonOf<R[Extract<keyof R, 200 | 201 | 202>]> : never

declare function call<P extends keyof paths, M extends Method & keyof paths[P]>(path: P, method: M, init: Init<Op<P, M>>): Promise<Ok<Op<P, M>>>

export async function walk() {
  const reg = await call('/v1/auth/register', 'post', { params: {}, body: { email: 'a@example.com', password: 'correct horse battery staple', name: 'A' } })
  const login = await call('/v1/auth/login', 'post', { params: {}, body: { email: 'a@example.com', password: 'correct horse battery staple' } })
  const me = await call('/v1/auth/me', 'get', { params: {} })
  const created = await call('/v1/spaces', 'post', { params: {}, body: { slug: 'blog', name: 'Blog' } })
  const slug: string = created.data.slug
  await call('/v1/spaces/{space}', 'patch', { params: { path: { space: slug } }, body: { name: 'Blog 2' } })
  await call('/v1/spaces/{space}/components', 'post', { params: { path: { space: slug } }, body: { name: 'hero', schema: { headline: { type: 'text' } } } })
  const story = await call('/v1/spaces/{space}/stories', 'post', {
    params: { path: { space: slug } },
    body: { name: 'Home', slug: 'home', content: { type: 'doc', blocks: [] } },
  })
  const uuid: string = story.data.uuid
  await call('/v1/spaces/{space}/stories/{uuid}', 'put', { params: { path: { space: slug, uuid } }, body: { name: 'Home page' } })
  await call('/v1/spaces/{space}/stories/{uuid}/publish', 'post', { params: { path: { space: slug, uuid } } })
  const list = await call('/v1/spaces/{space}/stories', 'get', { params: { path: { space: slug }, query: { per_page: 20, page: 1 } } })
  const total: number = list.meta.total
  const version = await call('/v1/spaces/{space}/stories/{uuid}/versions/{version_no}', 'get', { params: { path: { space: slug, uuid, version_no: 1 } } })
  const hook = await call('/v1/spaces/{space}/webhooks', 'post', {
    params: { path: { space: slug } },
    body: { label: 'Deploy', url: 'https://example.com/hook', events: ['story.published'] },
  })
  const hookId: number = hook.data.id
  await call('/v1/spaces/{space}/forms', 'post', { params: { path: { space: slug } }, body: { slug: 'contact', label: 'Contact', fields: [{ key: 'name', type: 'text', label: 'Name' }] } })
  await call('/v1/cdn/{space}/forms/{slug}', 'post', { params: { path: { space: slug, slug: 'contact' } }, body: { data: { name: 'Ada' } } })
  await call('/v1/graphql', 'post', { params: {}, body: { query: '{ __typename }' } })
  // @ts-expect-error per_page is an integer, not text
  await call('/v1/spaces/{space}/stories', 'get', { params: { path: { space: slug }, query: { per_page: '20' } } })
  // @ts-expect-error a Space needs its slug
  await call('/v1/spaces', 'post', { params: {}, body: { name: 'No slug' } })
  // The answers are typed (an untyped one would be \`never\`, which any use accepts).
  type Typed<T> = [T] extends [never] ? false : true
  const typed: [Typed<typeof reg>, Typed<typeof created>, Typed<typeof story>, Typed<typeof list>, Typed<typeof hook>] = [true, true, true, true, true]
  return { reg, login, me, total, version, hookId, typed }
}
`
