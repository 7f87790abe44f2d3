// The SDK's test program: the same checks in every runtime (Node, Bun, Chromium, workerd) against a real server.
// `run(sdk, image, richtext, editable, env)` resolves to a list of passed check names, or rejects with the first
// failure. `env`: {baseUrl, space, previewToken, formSlug}; the server holds the fixture of runtimes.test.ts.

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`)
}

export async function run(sdk, image, richtext, editable, env) {
  const passed = []
  const ok = (name) => passed.push(name)
  // A fetch that counts requests and can fail the first ones with 503 + Retry-After (retries are observable).
  let calls = 0
  let failNext = 0
  const countingFetch = async (input, init) => {
    calls++
    if (failNext > 0) {
      failNext--
      return new Response('{"error":"unavailable","message":"try again"}', { status: 503, headers: { 'Retry-After': '0', 'Content-Type': 'application/json' } })
    }
    return fetch(input, init)
  }
  const client = sdk.createClient({ baseUrl: env.baseUrl, space: env.space, fetch: countingFetch, retry: { retries: 2, maxDelayMs: 50 } })

  // One Story, with the locale chain.
  const { story, meta } = await client.story('blog/hello')
  check(story.full_path === '/blog/hello' && story.content.blocks[0].headline === 'Hello', 'story read')
  check(typeof meta.cv === 'number', 'meta.cv')
  const de = await client.story('/blog/hello', { lang: 'de' })
  check(de.story.lang === 'de' && de.story.content.blocks[0].headline === 'Hallo', 'lang')
  ok('story')

  // The ETag cache: a second read revalidates (If-None-Match → 304) and returns the same value; concurrent reads share one fetch.
  const before = calls
  const again = await client.story('blog/hello')
  check(again.story.uuid === story.uuid && calls === before + 1, 'etag revalidation')
  const c2 = sdk.createClient({ baseUrl: env.baseUrl, space: env.space, fetch: countingFetch })
  const n0 = calls
  const [x, y] = await Promise.all([c2.story('blog/hello'), c2.story('blog/hello')])
  check(x.story.uuid === y.story.uuid && calls === n0 + 1, 'de-duplication')
  ok('cache')

  // Lists: an async iterator over cursor pages.
  const paths = []
  let pages = 0
  for await (const page of client.stories({ startsWith: 'blog/', perPage: 2 })) {
    pages++
    for (const s of page.stories) paths.push(s.full_path)
  }
  check(pages === 2 && paths.join(',') === '/blog/hello,/blog/second,/blog/third', `stories iterator ${paths}`)
  const all = await client.allStories({ sortBy: 'name:desc', excludingFields: ['headline'] })
  check(all.length >= 3 && all.every((s) => s.content.blocks[0].headline === undefined), 'allStories + excludingFields')
  ok('stories')

  // Relations and links.
  const rel = await client.story('blog/second', { resolveRelations: ['post.related'], resolveLinks: true })
  check(rel.rels.length === 1 && rel.rels[0].full_path === '/blog/hello', 'resolveRelations')
  check(rel.story.content.blocks[0].link.full_path === '/blog/third', 'resolveLinks')
  ok('relations')

  // The change feed.
  const ch = await client.changes()
  check(ch.changes.length >= 3 && ch.cursor === String(ch.cv) && !ch.hasMore, 'changes')
  const none = await client.changes(ch.cursor)
  check(none.changes.length === 0, 'changes since cursor')
  ok('changes')

  // Drafts with a preview token.
  const preview = sdk.createClient({ baseUrl: env.baseUrl, space: env.space, previewToken: env.previewToken })
  const draft = await preview.story('blog/hello', { version: 'draft' })
  check(draft.story.content.blocks[0].headline === 'Hello (draft)', 'draft read')
  ok('preview')

  // Errors: one class, with status, code and request id.
  try {
    await client.story('no/such/story')
    check(false, 'a 404 throws')
  } catch (err) {
    check(err instanceof sdk.ContentServiceError && err.status === 404 && err.code === 'not_found' && err.requestId, 'error class')
  }
  try {
    await client.stories({ perPage: 1000 }).next()
    check(false, 'a 422 throws')
  } catch (err) {
    check(err.status === 422 && err.errors.per_page, 'keyed errors')
  }
  ok('errors')

  // Retries honour Retry-After (503 twice, then the answer).
  failNext = 2
  const r = await client.story('blog/third')
  check(r.story.full_path === '/blog/third' && failNext === 0, 'retry')
  ok('retry')

  // Search, forms, segment, GraphQL, the typed API.
  const found = await client.search('hello')
  check(Array.isArray(found.data), 'search')
  const submitted = await client.submitForm(env.formSlug, { email: 'someone@example.com' })
  check(submitted.data && submitted.data.ok === true, 'submitForm')
  check((await client.segment()) === null, 'segment')
  const gq = await client.graphql('query ($s: String!) { story(space: $s, path: "blog/hello") { name } }', { s: env.space })
  check(gq.story.name === 'Hello', 'graphql')
  const v = await client.api.GET('/v1/version')
  check(v.data && v.data.components.sdk_js.npm === '@content-service/sdk', 'client.api')
  client.beacon(story.uuid)
  ok('surfaces')

  // Sub-paths.
  const asset = { url: `${env.baseUrl}/v1/cdn/${env.space}/assets/0b6c6d36-0f6f-4b45-9b8f-6b1b8f1c3f11`, transform_url: 'x', width: 800, height: 400, alt: 'A' }
  check(image.imageUrl(asset, { width: 700 }).endsWith('.webp?w=750'), 'imageUrl snaps')
  check(image.srcset(asset).split(', ').length === 10, 'srcset up to the width')
  check(image.imgAttrs(asset).height === 400, 'imgAttrs')
  const html = richtext.renderHtml({
    type: 'doc',
    content: [{ type: 'paragraph', content: [{ type: 'text', text: '<b>', marks: [{ type: 'link', attrs: { href: 'javascript:alert(1)' } }] }, { type: 'text', text: 'x', marks: [{ type: 'bold' }] }] }],
  })
  check(html === '<p>&lt;b&gt;<strong>x</strong></p>', `renderHtml ${html}`)
  check(editable.editable(story)['data-story-uuid'] === story.uuid, 'editable')
  ok('subpaths')
  return passed
}
