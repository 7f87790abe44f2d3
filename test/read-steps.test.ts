import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { t as tb } from 'elysia'
import { defineModule } from '../src/kernel/module'
import type { ReadStep } from '../src/kernel/read'
import { MODULES } from '../src/modules'
import { publicStoryModel } from '../src/modules/stories/model'
import { type TestApp, testApp } from './helpers/app'

setDefaultTimeout(60_000)

/**
 * The public read's shape is declared by the read steps (kernel/read.ts `ReadStepMeta`): the stories module builds the
 * public Story model (OpenAPI), the GraphQL `StoryMeta` type and the read's description from them. The probe module
 * below is not part of the product: it adds `meta.probe_note` from its own folder.
 */
const probeStep: ReadStep = {
  name: 'probe',
  meta: {
    schema: { probe_note: tb.String({ description: 'A note from the probe module' }) },
    graphql: (f) => ({
      probe_note: f.string({ description: 'A note from the probe module', resolve: (m) => String(m.probe_note) }),
    }),
  },
  description: 'Probe: every Story carries `meta.probe_note`.',
  transform(ctx, draft) {
    draft.meta.probe_note = `read in ${ctx.lang}`
  },
}
const probeModule = defineModule({ name: 'probe', readSteps: () => [probeStep] })

let t: TestApp
let space: string
beforeAll(async () => {
  t = await testApp({}, {}, { modules: [...MODULES, probeModule] })
  const owner = (await t.register()).token
  space = (await t.createSpace(owner, { default_lang: 'en', locales: ['en'] })).slug
  const editor = (await t.spaceToken(owner, space, 'editor')).token
  const r = await t.request('POST', `/v1/spaces/${space}/stories`, { token: editor, body: { name: 'Hello', slug: 'hello' } })
  expect(r.status).toBe(201)
  expect((await t.request('POST', `/v1/spaces/${space}/stories/${r.body.data.uuid}/publish`, { token: editor })).status).toBe(200)
})
afterAll(async () => {
  await t?.close()
})

describe('a read step declares its meta entries, and every surface of the read shows them', () => {
  test('the REST body carries the entry after those of the modules listed above', async () => {
    const r = await t.request('GET', `/v1/cdn/${space}/stories/hello`)
    expect(r.status).toBe(200)
    expect(Object.keys(r.body.meta)).toEqual(['cv', 'served_segment', 'datasource_refs', 'beacon_url', 'probe_note'])
    expect(r.body.meta.probe_note).toBe('read in en')
  })

  test("the OpenAPI description of the read lists the entry in the body's meta and the step's sentence", async () => {
    const doc = (await t.request('GET', '/v1/openapi.json')).body
    const op = doc.paths['/v1/cdn/{space}/stories/{path}'].get
    const meta = op.responses['200'].content['application/json'].schema.properties.meta
    expect(Object.keys(meta.properties)).toEqual(['cv', 'served_segment', 'datasource_refs', 'beacon_url', 'probe_note', 'rel_uuids'])
    expect(meta.properties.probe_note).toMatchObject({ type: 'string', description: 'A note from the probe module' })
    expect(meta.required).toEqual(['cv', 'served_segment', 'datasource_refs', 'probe_note'])
    expect(op.description.endsWith(' Probe: every Story carries `meta.probe_note`.')).toBe(true)
  })

  test('GraphQL StoryMeta has the field, resolved from the served body', async () => {
    const r = await t.request('POST', '/v1/graphql', {
      body: { query: `{ story(space: "${space}", path: "hello") { meta { served_segment beacon_url probe_note } } }` },
    })
    expect(r.status).toBe(200)
    expect(r.body.data.story.meta).toEqual({ served_segment: null, beacon_url: `http://localhost/v1/cdn/${space}/_beacon`, probe_note: 'read in en' })
    const sdl = (await t.request('GET', '/v1/graphql/schema.gql')).text
    expect(sdl).toContain('probe_note: String!')
  })

  test('two steps declaring one entry are refused at start-up', () => {
    const twin: ReadStep = { name: 'twin', meta: probeStep.meta }
    expect(() => publicStoryModel([probeStep, twin])).toThrow('read steps "probe" and "twin" both declare meta.probe_note')
  })
})
