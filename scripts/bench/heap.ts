// bun scripts/bench/heap.ts [--stories=10000]
//
// What the JS side holds with N published Stories (embedded PGlite, in this process): seeds a scratch database the way
// bench:startup does, starts the runtime (index builds), warms up like bench:startup (the search answered, one read of
// every 100th Story), collects garbage and prints the JS heap (bun:jsc heapStats: size and the object types that
// grew most) and the RSS at each step. PGlite's WASM memory is part of the RSS, not of the heap.
import { heapStats } from 'bun:jsc'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { scratchDatabase } from './scratch'
import { loadConfig } from '../../src/config'
import { createKernel } from '../../src/kernel/kernel'
import { createRuntime } from '../../src/app'
import type { SpaceAccess } from '../../src/kernel/auth'
import { registerUser } from '../../src/modules/auth/service'
import { createComponent } from '../../src/modules/stories/components'
import { createSpace, findLiveSpace } from '../../src/modules/spaces/service'

const { values: args } = parseArgs({ options: { stories: { type: 'string', default: '10000' } } })
const N = Number(args.stories)
const rss = () => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024)
const snap = (label: string, before?: Record<string, number>) => {
  Bun.gc(true)
  const h = heapStats()
  const counts = h.objectTypeCounts as Record<string, number>
  console.log(`${label}: heap ${(h.heapSize / 2 ** 20).toFixed(1)} MB (capacity ${(h.heapCapacity / 2 ** 20).toFixed(1)} MB, extra ${((h.extraMemorySize ?? 0) / 2 ** 20).toFixed(1)} MB), objects ${h.objectCount}, RSS ${rss()} MB`)
  if (before) {
    const grew = Object.entries(counts)
      .map(([k, v]) => [k, v - (before[k] ?? 0)] as const)
      .filter(([, d]) => d > 1000)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
    console.log('  grew: ' + grew.map(([k, d]) => `${k} +${d}`).join(', '))
  }
  return { ...counts }
}

// The seeding of bench:startup (scripts/bench/startup.ts), the same rows.
async function seedStories(env: Record<string, string>, n: number, existing = 0) {
  const t0 = performance.now()
  const deps = await createKernel(loadConfig({ ...env, LOG_LEVEL: 'warn' }))
  let spaceId: number
  if (existing === 0) {
    const { user, tenant } = await registerUser(deps, { email: `startup-${Date.now()}@example.com`, password: 'bench bench bench bench', name: 'Bench' })
    const principal = { kind: 'user' as const, tokenId: '', tenantId: tenant.id, userId: user.id, expiresAt: null }
    await createSpace(deps, principal, { slug: 'bench', name: 'Bench', default_lang: 'en' })
    const access: SpaceAccess = { principal, space: (await findLiveSpace(deps, 'bench'))!, role: 'admin' }
    await createComponent(deps, access, { name: 'article', is_root: true, schema: { headline: { type: 'text' }, body: { type: 'textarea' } } })
    spaceId = access.space.id
    await deps.db.query(
      `insert into stories (uuid, space_id, parent_id, lang, name, slug, full_path, depth, is_folder, status, version_no, has_unpublished_changes, created_at, updated_at)
       select gen_random_uuid(), $1, null, 'en', 'Section ' || i, 'section-' || i, '/section-' || i, 1, true, 'draft', 1, true, now(), now()
       from generate_series(0, 19) i`,
      [spaceId],
    )
  } else {
    spaceId = (await findLiveSpace(deps, 'bench'))!.id
  }
  // ~300 words per Story from a vocabulary of 5,000 made-up words, so the index has real work.
  await deps.db.query(
    `with rows as (
       insert into stories (uuid, space_id, parent_id, lang, name, slug, full_path, depth, is_folder, status, version_no, has_unpublished_changes, published_at, created_at, updated_at)
       select gen_random_uuid(), $1, f.id, 'en', 'Article ' || i, 'article-' || i, f.full_path || '/article-' || i, 2, false, 'published', 1, false, now(), now(), now()
       from generate_series($2::int, $3::int) i join stories f on f.space_id = $1 and f.full_path = '/section-' || (i % 20)
       returning id, name, slug
     )
     select count(*) from rows`,
    [spaceId, existing, existing + n - 1],
  )
  await deps.db.query(
    `insert into story_contents (story_id, lang, content, updated_at)
     select s.id, 'en', jsonb_build_object('type', 'doc', 'blocks', jsonb_build_array(jsonb_build_object('component', 'article', '_uid', 'a' || s.id, 'headline', s.name, 'body', x.body))), now()
     from stories s cross join lateral (select string_agg('w' || ((s.id * 7919 + k * 104729) % 5000)::text, ' ') as body from generate_series(1, 300) k) x
     where s.space_id = $1 and not s.is_folder and not exists (select 1 from story_contents c where c.story_id = s.id)`,
    [spaceId],
  )
  await deps.db.query(
    `insert into story_published (story_id, lang, name, content, version_no, published_at)
     select s.id, 'en', s.name, c.content, 1, now() from stories s join story_contents c on c.story_id = s.id
     where s.space_id = $1 and not s.is_folder and not exists (select 1 from story_published p where p.story_id = s.id)`,
    [spaceId],
  )
  await deps.db.query(
    `insert into story_counts (space_id, status, count) select space_id, status, count(*)::int from stories group by 1, 2
     on conflict (space_id, status) do update set count = excluded.count`,
  )
  await deps.db.query('analyze')
  await deps.close()
  console.log(`  seeded ${n} Stories (now ${existing + n}) in ${Math.round(performance.now() - t0)} ms`)
}


const db = await scratchDatabase('pglite', '', 'cs-heap')
try {
  const env = { ...db.env, LOG_LEVEL: 'warn' }
  await seedStories(env, N)
  const kernel = await createKernel(loadConfig({ ...process.env, ...env, PORT: '0' }))
  const c0 = snap('kernel open')
  const runtime = createRuntime(kernel)
  await runtime.start()
  const server = runtime.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1 << 20, idleTimeout: 30 })
  const base = `http://127.0.0.1:${server.port}`
  const c1 = snap('runtime started', c0)
  for (let i = 0; i < 600; i++) {
    const r = await fetch(`${base}/v1/cdn/bench/search?q=w17`, { headers: { 'x-forwarded-for': '10.0.0.1' } })
    await r.arrayBuffer()
    if (r.status === 200) break
    await Bun.sleep(100)
  }
  const c2 = snap('search answered', c1)
  for (let i = 0; i < N; i += 100) {
    const r = await fetch(`${base}/v1/cdn/bench/stories/section-${i % 20}/article-${i}`, { headers: { 'x-forwarded-for': '10.0.0.2' } })
    await r.arrayBuffer()
  }
  snap(`read every 100th Story`, c2)
  server.stop(true)
  await runtime.close?.()
} finally {
  await db.cleanup()
}
process.exit(0)
