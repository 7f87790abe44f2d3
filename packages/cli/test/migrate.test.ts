/**
 * `migrate create` and `migrate run` as a user runs them (the built command under node, a subprocess) against a real
 * server: the dry run (the default) shows the diff and changes nothing; `--apply` makes exactly one version per changed
 * Story and none for the others; a Story saved by someone else while the run is at it is reported as a conflict and
 * keeps that edit; `--publish` publishes again what was published (a draft stays a draft); a second run finishes the
 * conflicted Story and leaves the migrated ones alone.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestApp, testApp } from '../../../test/helpers/app'

setDefaultTimeout(180_000)

const PKG = join(import.meta.dir, '..')
let t: TestApp
let server: { port: number | undefined; stop(force?: boolean): unknown }
let base: string
let owner: string
let space: string
let home: string
const uuids: Record<string, string> = {}

async function cli(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawn(['node', join(PKG, 'dist', 'cli.js'), ...args], {
    cwd: home,
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
    env: { PATH: process.env.PATH!, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), CI: '1', CONTENT_SERVICE_URL: base, CONTENT_SERVICE_TOKEN: owner, ...env },
  })
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { stdout, stderr, code, json: () => JSON.parse(stdout) }
}

const call = async (method: string, path: string, body?: unknown) => {
  const r = await t.request(method, `/v1/spaces/${space}${path}`, { token: owner, body })
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
  return r.body?.data
}

const story = (key: string) => call('GET', `/stories/${uuids[key]}`)
const versions = async () => Object.fromEntries(await Promise.all(Object.keys(uuids).map(async (k) => [k, (await story(k)).version_no])))
const post = (headline: string) => ({ type: 'doc', blocks: [{ component: 'post', _uid: 'p', headline, sections: [{ component: 'post', _uid: 'n', headline: `${headline} nested` }] }] })

beforeAll(async () => {
  const build = Bun.spawnSync(['bun', join(PKG, 'scripts', 'build.ts')], { stdout: 'pipe', stderr: 'pipe' })
  if (build.exitCode !== 0) throw new Error(build.stderr.toString())
  t = await testApp()
  server = t.app.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 22, idleTimeout: 60 })
  base = `http://127.0.0.1:${server.port}`
  owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en'] })).slug
  home = mkdtempSync(join(tmpdir(), 'cli-migrate-'))
  await call('POST', '/components', { name: 'post', schema: { headline: { type: 'text', required: true }, sections: { type: 'blocks' } } })
  await call('POST', '/components', { name: 'page', schema: { title: { type: 'text' } } })
  for (const [key, content] of [
    ['one', post('One')],
    ['two', post('Two')],
    ['draft', post('Draft')],
    ['race', post('Race')],
    ['page', { type: 'doc', blocks: [{ component: 'page', _uid: 'x', title: 'Not a post' }] }],
  ] as const) {
    uuids[key] = (await call('POST', '/stories', { name: key, slug: key, content })).uuid
    if (key !== 'draft') await call('POST', `/stories/${uuids[key]}/publish`)
  }
}, 240_000)

afterAll(async () => {
  server?.stop(true)
  await t?.close()
  if (home) rmSync(home, { recursive: true, force: true })
})

describe('migrate', () => {
  test('create writes a migration file that changes nothing until edited', async () => {
    const r = await cli(['migrate', 'create', 'upper', '--component', 'post', '--json'])
    expect(r.code).toBe(0)
    expect(r.json().file).toBe(join('migrations', 'upper.mjs'))
    const text = readFileSync(join(home, 'migrations', 'upper.mjs'), 'utf8')
    expect(text).toContain(`component: "post"`)
    expect(text).toContain("import('@content-service/cli/migrate').Migration")
    expect((await cli(['migrate', 'create', 'upper', '--component', 'post'])).code).toBe(2)
    const before = await versions()
    const run = await cli(['migrate', 'run', 'upper', '--space', space, '--apply', '--json'])
    expect(run.code).toBe(0)
    expect(run.json()).toMatchObject({ dry_run: false, component: 'post', translations: 5, saved: 0, changed: 0, conflicts: 0 })
    expect(await versions()).toEqual(before)
  })

  test('dry run shows the diff and changes nothing; --apply makes one version per changed Story; a concurrent edit is a conflict', async () => {
    // Upper-cases every post headline (nested posts too). On the Story "race" it first saves the Story itself, as another
    // editor would between the run's read and its write.
    writeFileSync(
      join(home, 'migrations', 'upper.mjs'),
      `// @ts-check
/** @type {import('@content-service/cli/migrate').Migration} */
export default {
  component: 'post',
  async migrate(block, { story }) {
    const headline = String(block.headline)
    if (headline === headline.toUpperCase()) return block
    if (story.full_path.replace(/^\\//, '') === 'race' && process.env.RACE_URL && block._uid === 'p') {
      const res = await fetch(process.env.RACE_URL + '/stories/' + story.uuid, {
        method: 'PUT',
        headers: { Authorization: 'Bearer ' + process.env.RACE_TOKEN, 'Content-Type': 'application/json' },
        body: JSON.stringify({ content: { type: 'doc', blocks: [{ component: 'post', _uid: 'p', headline: 'Edited meanwhile' }] } }),
      })
      if (!res.ok) throw new Error('race edit: ' + res.status)
    }
    return { ...block, headline: headline.toUpperCase() }
  },
}
`,
    )
    const before = await versions()
    const dry = await cli(['migrate', 'run', 'upper', '--space', space])
    expect(dry.stderr).toBe('')
    expect(dry.code).toBe(0)
    expect(dry.stdout).toMatch(/would change \/?one \[en\]\n {2}blocks\/0\/headline: "One" → "ONE"\n {2}blocks\/0\/sections\/0\/headline: "One nested" → "ONE NESTED"/)
    expect(dry.stdout).toContain('Dry run: 4 translations would change')
    expect(await versions()).toEqual(before)
    expect((await story('one')).content.blocks[0].headline).toBe('One')

    const race = { RACE_URL: `${base}/v1/spaces/${space}`, RACE_TOKEN: owner }
    const run = await cli(['migrate', 'run', 'upper', '--space', space, '--apply', '--publish', '--json'], race)
    expect(run.code).toBe(5)
    const r = run.json()
    expect(r).toMatchObject({ dry_run: false, saved: 3, conflicts: 1, failed: 0, published: 2 })
    expect(r.stories.find((s: any) => s.result === 'conflict').uuid).toBe(uuids.race)
    const after = await versions()
    // One version per changed Story; the race Story has the other editor's version only; the page is untouched.
    expect(after).toEqual({ one: before.one + 1, two: before.two + 1, draft: before.draft + 1, race: before.race + 1, page: before.page })
    expect((await story('race')).content.blocks[0].headline).toBe('Edited meanwhile')
    expect((await story('one')).content.blocks[0].sections[0].headline).toBe('ONE NESTED')
    // Published again where it was published; the draft stays a draft.
    const pub = await fetch(`${base}/v1/cdn/${space}/stories/two`).then((x) => x.json())
    expect(pub.data.content.blocks[0].headline).toBe('TWO')
    expect((await story('draft')).status).toBe('draft')

    // Run again: only the conflicted Story changes now; the migrated ones are left alone.
    const again = await cli(['migrate', 'run', 'upper', '--space', space, '--apply', '--json'])
    expect(again.code).toBe(0)
    expect(again.json()).toMatchObject({ saved: 1, conflicts: 0 })
    expect(again.json().stories.map((s: any) => s.uuid)).toEqual([uuids.race])
    const last = await versions()
    expect(last).toEqual({ ...after, race: after.race + 1 })
    expect((await story('race')).content.blocks[0].headline).toBe('EDITED MEANWHILE')
  })

  test('an interrupted run (answers lost after the writes reached the server) run again migrates nothing twice and publishes what it saved', async () => {
    // Not idempotent: each run over a block adds one more "!".
    writeFileSync(join(home, 'migrations', 'bang.mjs'), `export default { component: 'post', migrate: (block) => ({ ...block, headline: block.headline + '!' }) }\n`)
    const gate = { writes: 0, failAfter: Number.POSITIVE_INFINITY }
    const proxy = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        const url = new URL(req.url)
        const headers = new Headers(req.headers)
        headers.delete('host')
        const res = await fetch(`${base}${url.pathname}${url.search}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : await req.arrayBuffer() })
        if (req.method !== 'GET' && ++gate.writes > gate.failAfter) {
          await res.arrayBuffer()
          return Response.json({ error: 'bad_gateway', message: 'the connection was lost' }, { status: 502 })
        }
        return new Response(await res.arrayBuffer(), { status: res.status, headers: { 'Content-Type': res.headers.get('content-type') ?? 'application/json' } })
      },
    })
    try {
      const via = { CONTENT_SERVICE_URL: `http://127.0.0.1:${proxy.port}` }
      const headlines = async () => Object.fromEntries(await Promise.all(['draft', 'one', 'race', 'two'].map(async (k) => [k, (await story(k)).content.blocks[0].headline])))
      const before = { versions: await versions(), headlines: await headlines(), nested: (await story('one')).content.blocks[0].sections[0].headline }
      await call('POST', `/stories/${uuids.race}/publish`) // all but the draft published, without unpublished changes
      const bang = () => cli(['migrate', 'run', 'bang', '--space', space, '--apply', '--publish', '--json'], via)
      // 1st run (draft, one, page, race, two in path order): saves the draft and One; One's publish reaches the
      // server, its answer is lost: the run stops.
      Object.assign(gate, { writes: 0, failAfter: 2 })
      expect((await bang()).code).toBe(6)
      // 2nd: One is done (published now, as recorded); Race's and Two's saves reach the server, their answers are lost.
      Object.assign(gate, { writes: 0, failAfter: 1 })
      const second = await bang()
      expect(second.code).toBe(5)
      expect(second.json()).toMatchObject({ saved: 0, done: 2, failed: 2 })
      Object.assign(gate, { writes: 0, failAfter: Number.POSITIVE_INFINITY })
      const third = await bang()
      expect([third.code, third.stderr]).toEqual([0, ''])
      expect(third.json()).toMatchObject({ saved: 0, changed: 0, done: 4, failed: 0, published: 2, stories: [] })
      // One "!" each, one version each, published where it was published.
      expect(await headlines()).toEqual(Object.fromEntries(Object.entries(before.headlines).map(([k, h]) => [k, `${h}!`])))
      expect((await story('one')).content.blocks[0].sections[0].headline).toBe(`${before.nested}!`)
      expect(await versions()).toEqual({ ...before.versions, draft: before.versions.draft + 1, one: before.versions.one + 1, race: before.versions.race + 1, two: before.versions.two + 1 })
      for (const k of ['one', 'race', 'two']) {
        const pub = await fetch(`${base}/v1/cdn/${space}/stories/${k}`).then((x) => x.json())
        expect([k, pub.data.content.blocks[0].headline]).toEqual([k, `${before.headlines[k]}!`])
      }
      expect((await story('draft')).status).toBe('draft')
    } finally {
      proxy.stop(true)
    }
  })

  test('usage errors', async () => {
    expect((await cli(['migrate', 'run', 'nope', '--space', space])).code).toBe(2)
    expect((await cli(['migrate', 'run', 'upper', '--space', space, '--apply', '--dry-run'])).code).toBe(2)
    expect((await cli(['migrate', 'create', '../x', '--component', 'post'])).code).toBe(2)
    expect((await cli(['migrate', 'frobnicate'])).code).toBe(2)
  })
})
