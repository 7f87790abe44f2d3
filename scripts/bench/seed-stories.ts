// The Stories the start-up and heap benches seed: a Space "bench" with 20 folders and n published articles of about
// 300 words each, written in bulk SQL (the index then has real work). Used by scripts/bench/startup.ts and heap.ts.
import { loadConfig } from '../../src/config'
import type { SpaceAccess } from '../../src/kernel/auth'
import { createKernel } from '../../src/kernel/kernel'
import { firstAccount, registerUser } from '../../src/modules/auth/service'
import { createComponent } from '../../src/modules/stories/components'
import { createSpace, findLiveSpace } from '../../src/modules/spaces/service'

export async function seedStories(env: Record<string, string>, n: number, existing = 0) {
  const t0 = performance.now()
  const deps = await createKernel(loadConfig({ ...env, LOG_LEVEL: 'warn' }))
  let spaceId: number
  if (existing === 0) {
    const { user, tenant } = firstAccount(await registerUser(deps, { email: `startup-${Date.now()}@example.com`, password: 'bench bench bench bench', name: 'Bench' }))
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
