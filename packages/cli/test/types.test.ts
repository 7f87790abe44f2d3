/**
 * Types from blueprints: fixtures generated into a temporary project, then a `tsc --strict` program proves the types
 * accept what content can be and reject what it cannot (`@ts-expect-error` lines fail the check when they stop
 * erroring), and the generated runtime validator checks content with the server's rules.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { buildSdk } from '../../sdk/test/fixture'
import { type Blueprint, generateTypes, generateValidator, typeNames } from '../src/typegen'

setDefaultTimeout(180_000)

const ROOT = join(import.meta.dir, '..', '..', '..')

const level = (n: number): Blueprint => ({
  name: `l${n}`,
  is_root: n === 1,
  is_nestable: n > 1,
  schema: { label: { type: 'text', required: true }, ...(n < 8 ? { children: { type: 'blocks', component_whitelist: [`l${n + 1}`] } } : {}) },
})

/** Eight levels of nesting, empty and missing whitelists, non-identifier options, every field type, clashing names. */
export const FIXTURE: Blueprint[] = [
  ...Array.from({ length: 8 }, (_, i) => level(i + 1)),
  {
    name: 'kitchen',
    is_root: true,
    is_nestable: false,
    schema: {
      title: { type: 'text', required: true },
      subtitle: { type: 'textarea' },
      body: { type: 'richtext' },
      notes: { type: 'markdown' },
      count: { type: 'number', required: true },
      enabled: { type: 'boolean' },
      when: { type: 'datetime' },
      choice: { type: 'select', options: ['foo bar', "it's", '100%', 'ü', 'a"b', 'class'] },
      many: { type: 'multiselect', options: ['x-1', 'y 2'] },
      tags: { type: 'tags' },
      image: { type: 'asset' },
      cta: { type: 'link' },
      nothing: { type: 'blocks', component_whitelist: [] },
      anything: { type: 'blocks' },
    },
  },
  { name: 'hero-banner', is_root: false, is_nestable: true, schema: { headline: { type: 'text' } } },
  { name: 'hero_banner', is_root: false, is_nestable: true, schema: { kicker: { type: 'text' } } },
  { name: 'asset', is_root: false, is_nestable: true, schema: { caption: { type: 'text' } } },
  { name: 'not-nestable', is_root: false, is_nestable: false, schema: {} },
]

const PROGRAM = `import { createClient } from '@content-service/sdk'
import type { Asset, Block, ComponentMap, ComponentName, HeroBanner, HeroBanner2, AssetBlock, Kitchen, L1, L8, Link, RootBlock, Schema, StoryContent } from './content'
import { contentErrors, isValidContent } from './content.validate'

const client = createClient<Schema>({ baseUrl: 'http://127.0.0.1:1', space: 'demo' })

export async function read() {
  const { story } = await client.story('home')
  const block = story.content.blocks[0]
  // @ts-expect-error a root block is a union: fields need the component checked first
  block.title
  if (block.component === 'kitchen') {
    const title: string = block.title
    const count: number = block.count
    // @ts-expect-error an optional field may be missing
    const subtitle: string = block.subtitle
    const choice: 'foo bar' | "it's" | '100%' | 'ü' | 'a"b' | 'class' | undefined = block.choice
    // @ts-expect-error not one of the options
    const wrong: typeof block.choice = 'foo'
    const many: ('x-1' | 'y 2')[] | undefined = block.many
    const image: Asset | undefined = block.image
    const url: string | null | undefined = block.image?.url
    const cta: Link | undefined = block.cta
    if (block.cta?.story_uuid) block.cta.full_path
    // @ts-expect-error an empty whitelist admits no block
    const none: Block[] = [{ component: 'l2', _uid: 'x', label: 'y' }] satisfies NonNullable<Kitchen['nothing']>
    const any: NonNullable<Kitchen['anything']>[number]['component'] = 'hero-banner'
    // @ts-expect-error a block that cannot be nested is not admitted without a whitelist either
    const notNestable: NonNullable<Kitchen['anything']>[number]['component'] = 'not-nestable'
    const body = typeof block.body === 'string' ? block.body : block.body?.content[0]?.type
    return [title, count, subtitle, choice, wrong, many, image, url, cta, none, any, notNestable, body]
  }
  if (block.component === 'l1') {
    // Eight levels down, each typed by its whitelist.
    const deep: L8 | undefined = block.children?.[0]?.children?.[0]?.children?.[0]?.children?.[0]?.children?.[0]?.children?.[0]?.children?.[0]
    // @ts-expect-error l8 has no children field
    deep?.children
    return deep?.label
  }
  // @ts-expect-error only root blueprints are root blocks
  const notRoot: RootBlock['component'] = 'l2'
  return notRoot
}

const name: ComponentName = 'hero-banner'
// @ts-expect-error not a blueprint
const unknown: ComponentName = 'nope'
const map: ComponentMap['hero_banner'] = { component: 'hero_banner', _uid: 'u', kicker: 'k' }
// @ts-expect-error a field of another blueprint
const mixed: HeroBanner = { component: 'hero-banner', _uid: 'u', kicker: 'k' }
const clash: HeroBanner2 = map
const renamed: AssetBlock = { component: 'asset', _uid: 'a' }
// @ts-expect-error a required field is missing
const incomplete: L1 = { component: 'l1', _uid: 'x' }
const content: StoryContent = { type: 'doc', blocks: [{ component: 'kitchen', _uid: 'k', title: 't', count: 1 }] }
const data: unknown = JSON.parse('{}')
if (isValidContent(data)) {
  const checked: StoryContent = data
  void checked
}
export const all = [name, unknown, map, mixed, clash, renamed, incomplete, content, contentErrors(content)]
`

let dir: string
beforeAll(async () => {
  await buildSdk()
  // Inside the repository (so `@content-service/sdk` resolves through the workspace), in a folder of its own.
  dir = mkdtempSync(join(ROOT, 'packages', 'cli', 'test', '.types-'))
  writeFileSync(join(dir, 'content.d.ts'), generateTypes(FIXTURE, 'the fixture'))
  const v = generateValidator(FIXTURE, './content')
  writeFileSync(join(dir, 'content.validate.js'), v.js)
  writeFileSync(join(dir, 'content.validate.d.ts'), v.dts)
}, 120_000)

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('types from blueprints', () => {
  test('names: PascalCase, unique, never a helper type', () => {
    const names = typeNames(FIXTURE)
    expect([names.get('hero-banner'), names.get('hero_banner'), names.get('asset'), names.get('l8')]).toEqual(['HeroBanner', 'HeroBanner2', 'AssetBlock', 'L8'])
  })

  test('a tsc --strict program: what content can be compiles, what it cannot is an error', () => {
    writeFileSync(join(dir, 'program.ts'), PROGRAM)
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', lib: ['ES2022', 'DOM'], types: [], allowJs: false, skipLibCheck: false },
        files: ['program.ts'],
      }),
    )
    const r = Bun.spawnSync(['bun', 'x', 'tsc', '-p', join(dir, 'tsconfig.json')], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
    const output = r.stdout.toString() + r.stderr.toString()
    if (r.exitCode !== 0) throw new Error(output)
    expect(output).toBe('')
  })

  test('the generated validator checks content with the server’s rules', async () => {
    const m = await import(pathToFileURL(join(dir, 'content.validate.js')).href)
    expect(m.isValidContent({ type: 'doc', blocks: [{ component: 'kitchen', _uid: 'k', title: 't', count: 2, choice: 'foo bar' }] })).toBe(true)
    expect(m.contentErrors({ type: 'doc', blocks: [{ component: 'kitchen', _uid: 'k', count: 'two', choice: 'foo', extra: 1 }] })).toEqual({
      'blocks/0/extra': ['is not a field of this component'],
      'blocks/0/title': ['is required'],
      'blocks/0/count': ['must be a number'],
      'blocks/0/choice': [expect.stringContaining('must be one of')],
    })
    expect(m.contentErrors({ type: 'doc', blocks: [{ component: 'l2', _uid: 'x', label: 'y' }] })['blocks/0/component']).toEqual([
      '"l2" is not allowed at the top level',
      '"l2" cannot be nested',
    ].slice(0, 1))
    const nested = { component: 'kitchen', _uid: 'k', title: 't', count: 1, nothing: [{ component: 'hero-banner', _uid: 'h' }] }
    expect(m.contentErrors({ type: 'doc', blocks: [nested] })).toEqual({ 'blocks/0/nothing/0/component': ['"hero-banner" is not allowed here'] })
  })
})
