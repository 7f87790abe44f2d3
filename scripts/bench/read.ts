// bun run bench:read [--driver=pglite|postgres|both] [--server=binary|source] [--stories=10000] [--list-stories=100000]
//                    [--duration=10] [--connections=64] [--pg=postgres://postgres@127.0.0.1:5432]
//
// The public read against a raw Bun.serve answering the same bytes, and management listing latency at scale.
// 1. Seeds a Space with --stories published Stories of about 5 KB (and a second Space with --list-stories Stories in
//    100 root folders) through the service layer and bulk inserts, on a fresh PGlite directory or Postgres database.
// 2. Starts the server as its own process: the built executable (dist/content-service, rebuilt first) or,
//    with --server=source, `bun bin/content-service.ts serve`.
// 3. Warms the read cache over every path, then drives GET /v1/cdn/{space}/stories/{path} over all paths with
//    autocannon; then the same against a raw Bun.serve process that returns one of those bodies for every request.
// 4. Times sequential listing and tree requests against the 100,000-Story Space.
// Requests rotate X-Forwarded-For over many addresses (the server trusts loopback as a proxy) so the per-IP limit of
// 600/min does not turn the run into a 429 benchmark; the limiter itself still runs on every request.
import { scratchDatabase } from './scratch'
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { stories, storyContents, storyPublished, storyVersions } from '../../db/schema'
import { loadConfig } from '../../src/config'
import { createKernel } from '../../src/kernel/kernel'
import type { SpaceAccess } from '../../src/kernel/auth'
import { registerUser } from '../../src/modules/auth/service'
import { contentErrors, type Doc } from '../../src/modules/stories/blocks'
import { createComponent } from '../../src/modules/stories/components'
import { blueprintsOf } from '../../src/modules/stories/repo'
import { createSpace, findLiveSpace } from '../../src/modules/spaces/service'

const root = join(import.meta.dir, '..', '..')
const { values: args } = parseArgs({
  options: {
    driver: { type: 'string', default: 'both' },
    server: { type: 'string', default: 'binary' },
    stories: { type: 'string', default: '10000' },
    'list-stories': { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
  },
})
const N_STORIES = Number(args.stories)
const N_LIST = Number(args['list-stories'])
const DURATION = Number(args.duration)
const CONNECTIONS = Number(args.connections)
const drivers = args.driver === 'both' ? ['pglite', 'postgres'] : [args.driver!]

const LOREM =
  'Content lives in Spaces as Stories: block documents with versions, locales and a publishing status. Editors compose pages from blueprints; the public read serves the published snapshot from memory. '

function articleDoc(i: number): Doc {
  const blocks: Doc['blocks'] = [{ component: 'hero', _uid: `h${i}`, headline: `Article number ${i}`, subline: LOREM.slice(0, 120) }]
  // About 5 KB of JSON per Story.
  for (let p = 0; p < 20; p++) blocks.push({ component: 'paragraph', _uid: `p${i}-${p}`, text: `${p}: ${LOREM}` })
  return { type: 'doc', blocks }
}

function pct(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

async function waitFor(url: string, ms = 60_000) {
  const until = Date.now() + ms
  while (Date.now() < until) {
    try {
      if ((await fetch(url)).ok) return
    } catch {}
    await Bun.sleep(100)
  }
  throw new Error(`server did not come up at ${url}`)
}

function serverCommand(): string[] {
  if (args.server === 'source') return ['bun', join(root, 'bin', 'content-service.ts'), 'serve']
  // Always rebuild (it takes about a second): a stale executable would measure old code.
  const b = Bun.spawnSync(['bun', 'run', 'build'], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
  const bin = join(root, 'dist', 'content-service')
  if (b.exitCode !== 0 || !existsSync(bin)) throw new Error('build failed; run with --server=source to bench from source')
  return [bin, 'serve']
}

async function seed(env: Record<string, string>) {
  const config = loadConfig({ ...env, LOG_LEVEL: 'warn' })
  const deps = await createKernel(config)
  const t0 = performance.now()
  const { token, user, tenant } = await registerUser(deps, {
    email: `bench-${Date.now()}@example.com`,
    password: 'bench bench bench bench',
    name: 'Bench',
  })
  const principal = { kind: 'user' as const, tokenId: '', tenantId: tenant.id, userId: user.id, expiresAt: null }
  const access = async (slug: string): Promise<SpaceAccess> => ({ principal, space: (await findLiveSpace(deps, slug))!, role: 'admin' })
  await createSpace(deps, principal, { slug: 'bench', name: 'Bench', default_lang: 'en' })
  await createSpace(deps, principal, { slug: 'bench-list', name: 'Bench list', default_lang: 'en' })
  const bench = await access('bench')
  const list = await access('bench-list')
  await createComponent(deps, bench, { name: 'hero', schema: { headline: { type: 'text', required: true }, subline: { type: 'textarea' } } })
  await createComponent(deps, bench, { name: 'paragraph', is_root: true, schema: { text: { type: 'markdown' } } })
  const blueprints = await blueprintsOf(deps.db.db, bench.space.id)
  const sample = articleDoc(0)
  const errors = contentErrors(sample, blueprints)
  if (Object.keys(errors).length) throw new Error(`seed content is invalid: ${JSON.stringify(errors)}`)
  console.log(`  content per Story: ${JSON.stringify(sample).length} bytes`)

  // Published Stories: 100 sections with N/100 articles each, written in batches (the service path would take minutes).
  const now = new Date()
  const paths: string[] = []
  const sections = 100
  const perSection = Math.ceil(N_STORIES / sections)
  for (let s = 0; s < sections; s++) {
    await deps.db.db.transaction(async (tx) => {
      const [folder] = await tx
        .insert(stories)
        .values({
          uuid: crypto.randomUUID(), spaceId: bench.space.id, parentId: null, lang: 'en', name: `Section ${s}`, slug: `section-${s}`,
          fullPath: `/section-${s}`, depth: 1, isFolder: true, status: 'draft', versionNo: 1, hasUnpublishedChanges: true, createdAt: now, updatedAt: now,
        })
        .returning()
      await tx.insert(storyContents).values({ storyId: folder.id, lang: 'en', content: { type: 'doc', blocks: [] }, updatedAt: now })
      const count = Math.min(perSection, N_STORIES - s * perSection)
      if (count <= 0) return
      const rows = await tx
        .insert(stories)
        .values(
          Array.from({ length: count }, (_, k) => {
            const slug = `article-${s * perSection + k}`
            return {
              uuid: crypto.randomUUID(), spaceId: bench.space.id, parentId: folder.id, lang: 'en', name: `Article ${s * perSection + k}`, slug,
              fullPath: `/section-${s}/${slug}`, depth: 2, isFolder: false, status: 'published' as const, versionNo: 1, hasUnpublishedChanges: false,
              publishedAt: now, createdAt: now, updatedAt: now,
            }
          }),
        )
        .returning({ id: stories.id, fullPath: stories.fullPath, name: stories.name, slug: stories.slug })
      const docs = rows.map((r, k) => articleDoc(s * perSection + k))
      await tx.insert(storyContents).values(rows.map((r, k) => ({ storyId: r.id, lang: 'en', content: docs[k], updatedAt: now })))
      await tx.insert(storyVersions).values(
        rows.map((r, k) => ({ storyId: r.id, versionNo: 1, lang: 'en', name: r.name, slug: r.slug, fullPath: r.fullPath, content: docs[k], authorUserId: user.id, createdAt: now })),
      )
      await tx.insert(storyPublished).values(rows.map((r, k) => ({ storyId: r.id, lang: 'en', name: r.name, content: docs[k], versionNo: 1, publishedAt: now })))
      for (const r of rows) paths.push(r.fullPath.slice(1))
    })
  }

  // The listing Space: 100 root folders, the rest spread below them, a third of them published.
  const listId = list.space.id
  await deps.db.query(
    `insert into stories (uuid, space_id, parent_id, lang, name, slug, full_path, depth, is_folder, status, version_no, has_unpublished_changes, created_at, updated_at)
     select gen_random_uuid(), $1, null, 'en', 'Folder ' || i, 'folder-' || i, '/folder-' || i, 1, true, 'draft', 1, true, now(), now()
     from generate_series(1, 100) i`,
    [listId],
  )
  await deps.db.query(
    `insert into stories (uuid, space_id, parent_id, lang, name, slug, full_path, depth, is_folder, status, version_no, has_unpublished_changes, created_at, updated_at)
     select gen_random_uuid(), $1, f.id, 'en', 'Page ' || f.id || '-' || j, 'page-' || j, f.full_path || '/page-' || j, 2, false,
            case when j % 3 = 0 then 'published' else 'draft' end, 1, true, now(), now()
     from stories f cross join generate_series(1, $2::int) j where f.space_id = $1 and f.depth = 1`,
    [listId, Math.ceil((N_LIST - 100) / 100)],
  )
  await deps.db.query(
    `insert into story_contents (story_id, lang, content, updated_at)
     select id, 'en', '{"type":"doc","blocks":[]}'::jsonb, now() from stories where space_id = $1`,
    [listId],
  )
  // story_counts is kept by the service; bulk inserts bypass it, so fill it here.
  await deps.db.query(
    `insert into story_counts (space_id, status, count) select space_id, status, count(*)::int from stories group by 1, 2
     on conflict (space_id, status) do update set count = excluded.count`,
  )
  await deps.db.query('analyze')
  const [{ n }] = await deps.db.query<{ n: number }>('select count(*)::int as n from stories where space_id = $1', [listId])
  const [folder] = await deps.db.query<{ uuid: string }>(`select uuid from stories where space_id = $1 and full_path = '/folder-50'`, [listId])
  const plans: Record<string, string> = {}
  for (const [name, q] of Object.entries({
    'list page': `select * from stories where space_id = ${listId} and status <> 'archived' order by full_path limit 25 offset 0`,
    'list by status': `select * from stories where space_id = ${listId} and status = 'published' order by full_path limit 25`,
    'children': `select * from stories where space_id = ${listId} and parent_id = any(array[1,2,3]) and status <> 'archived' order by full_path limit 5001`,
    'count': `select count(*) from stories where space_id = ${listId} and status <> 'archived'`,
  })) {
    const rows = await deps.db.query<{ 'QUERY PLAN': string }>(`explain ${q}`)
    plans[name] = rows.map((r) => r['QUERY PLAN']).join(' | ')
  }
  console.log(`  seeded ${paths.length} published Stories and a ${n}-Story Space in ${Math.round(performance.now() - t0)} ms`)
  for (const [k, v] of Object.entries(plans)) console.log(`  plan ${k}: ${v.slice(0, 160)}`)
  await deps.close()
  return { token, paths, listFolder: folder.uuid, listCount: n }
}

function ipOf(i: number) {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
}

async function cannon(base: string, paths: string[], ipBase: number) {
  let i = 0
  const result = await autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: DURATION,
    requests: [
      {
        method: 'GET',
        setupRequest: (req) => {
          const k = i++
          req.path = `/v1/cdn/bench/stories/${paths[k % paths.length]}`
          req.headers = { ...req.headers, 'x-forwarded-for': ipOf(ipBase + (k % 8192)) }
          return req
        },
      },
    ],
  })
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
  }
}

async function listingLatency(base: string, token: string, folder: string) {
  const cases: Record<string, string> = {
    'list page 1': '/v1/spaces/bench-list/stories?per_page=25',
    'list page 2000': '/v1/spaces/bench-list/stories?per_page=25&page=2000',
    'list status=published': '/v1/spaces/bench-list/stories?status=published&per_page=25',
    'list parent_uuid': `/v1/spaces/bench-list/stories?parent_uuid=${folder}&per_page=25`,
    'tree depth=1': '/v1/spaces/bench-list/stories/tree?per_page=25&depth=1',
    'children depth=1 (999)': `/v1/spaces/bench-list/stories/${folder}/children`,
  }
  const out: Record<string, { p50: number; p99: number }> = {}
  for (const [name, path] of Object.entries(cases)) {
    const times: number[] = []
    for (let k = 0; k < 120; k++) {
      const t0 = performance.now()
      const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': ipOf(200_000 + k) } })
      if (!res.ok) throw new Error(`${name}: ${res.status} ${await res.text()}`)
      await res.arrayBuffer()
      if (k >= 20) times.push(performance.now() - t0) // the first 20 warm connections and plans
    }
    times.sort((a, b) => a - b)
    out[name] = { p50: Math.round(pct(times, 50) * 100) / 100, p99: Math.round(pct(times, 99) * 100) / 100 }
  }
  return out
}

async function run(driver: string) {
  console.log(`\n== ${driver} ==`)
  // One key for the seeding process and the server (required with DATABASE_URL).
  const { env, cleanup } = await scratchDatabase(driver as 'pglite' | 'postgres', args.pg, 'cs_bench')
  try {
    const seeded = await seed(env)
    const port = 18_000 + Math.floor(Math.random() * 1000)
    const server = Bun.spawn(serverCommand(), {
      cwd: root,
      env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', TRUSTED_PROXIES: '127.0.0.1', CDN_CACHE_MB: '512' },
      stdout: 'ignore',
      stderr: 'inherit',
    })
    const base = `http://127.0.0.1:${port}`
    try {
      await waitFor(`${base}/v1/version`)
      // Warm the cache over every path (cache misses are one indexed read each).
      const t0 = performance.now()
      let sample: { body: ArrayBuffer; headers: Headers } | null = null
      for (let k = 0; k < seeded.paths.length; k += 32) {
        await Promise.all(
          seeded.paths.slice(k, k + 32).map(async (p, j) => {
            const res = await fetch(`${base}/v1/cdn/bench/stories/${p}`, { headers: { 'x-forwarded-for': ipOf(100_000 + ((k + j) % 8192)) } })
            if (res.status !== 200) throw new Error(`warm-up ${p}: ${res.status}`)
            const body = await res.arrayBuffer()
            sample ??= { body, headers: res.headers }
          }),
        )
      }
      console.log(`  warm-up: ${seeded.paths.length} paths in ${Math.round(performance.now() - t0)} ms (cold reads from the database)`)
      const ours = await cannon(base, seeded.paths, 0)

      // The baseline: a bare Bun.serve, in its own process, answering the same bytes and headers.
      const bodyFile = join(tmpdir(), `cs-bench-body-${port}.json`)
      writeFileSync(bodyFile, new Uint8Array(sample!.body))
      const rawPort = port + 1
      const raw = Bun.spawn(
        [
          'bun',
          '-e',
          `const body = new Uint8Array(await Bun.file(${JSON.stringify(bodyFile)}).arrayBuffer());
           const headers = ${JSON.stringify({ 'content-type': sample!.headers.get('content-type'), etag: sample!.headers.get('etag'), 'cache-control': sample!.headers.get('cache-control'), vary: sample!.headers.get('vary') })};
           Bun.serve({ port: ${rawPort}, hostname: '127.0.0.1', fetch: () => new Response(body, { headers }) });`,
        ],
        { stdout: 'ignore', stderr: 'inherit' },
      )
      await waitFor(`http://127.0.0.1:${rawPort}/`)
      const bare = await cannon(`http://127.0.0.1:${rawPort}`, seeded.paths, 0)
      raw.kill()
      rmSync(bodyFile, { force: true })

      const listing = await listingLatency(base, seeded.token, seeded.listFolder)
      return { driver, ours, bare, ratio: Math.round((ours.rps / bare.rps) * 1000) / 10, listing, listCount: seeded.listCount, bodyBytes: sample!.body.byteLength }
    } finally {
      server.kill()
      await server.exited
    }
  } finally {
    await cleanup()
  }
}

const results: Awaited<ReturnType<typeof run>>[] = []
for (const d of drivers) {
  const r = await run(d)
  results.push(r)
  console.log(`  ${JSON.stringify(r)}`)
}

console.log(`\nGET /v1/cdn/{space}/stories/{path}: ${N_STORIES} Stories, ${CONNECTIONS} connections, ${DURATION} s, server=${args.server}`)
console.log('driver    | server        | req/s    | p50 ms | p99 ms | non-2xx | body bytes')
for (const r of results) {
  console.log(`${r.driver.padEnd(9)} | content-svc   | ${String(r.ours.rps).padEnd(8)} | ${String(r.ours.p50).padEnd(6)} | ${String(r.ours.p99).padEnd(6)} | ${String(r.ours.non2xx).padEnd(7)} | ${r.bodyBytes}`)
  console.log(`${r.driver.padEnd(9)} | raw Bun.serve | ${String(r.bare.rps).padEnd(8)} | ${String(r.bare.p50).padEnd(6)} | ${String(r.bare.p99).padEnd(6)} | ${String(r.bare.non2xx).padEnd(7)} |`)
  console.log(`${r.driver.padEnd(9)} | ratio         | ${r.ratio}% of raw`)
}
console.log(`\nManagement listing on a ${results[0]?.listCount}-Story Space (sequential, client-side latency in ms)`)
for (const r of results) for (const [k, v] of Object.entries(r.listing)) console.log(`${r.driver.padEnd(9)} | ${k.padEnd(24)} | p50 ${v.p50} | p99 ${v.p99}`)
console.log(`\n${JSON.stringify(results)}`)
