/**
 * The admin app's version diff (admin/src/components/doc-diff.ts): blocks matched by `_uid`, fields compared one by
 * one, moves found as the blocks out of their relative order, values shown as text (richtext by its text).
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { asText, diffStories } from '../../admin/src/components/doc-diff'
import { duplicateBlock } from '../../admin/src/components/block-editor'

setDefaultTimeout(60_000)

const doc = (blocks: unknown[]) => ({ type: 'doc', blocks })
const b = (uid: string, fields: Record<string, unknown> = {}): { component: string; _uid: string } & Record<string, unknown> => ({ component: 'teaser', _uid: uid, ...fields })

describe('diffStories', () => {
  test('the same content: no change', () => {
    const c = doc([b('a', { headline: 'x', tags: ['1', '2'], link: { url: '/x' } })])
    expect(diffStories({ name: 'N', content: c }, { name: 'N', content: structuredClone(c) })).toEqual([])
  })

  test('a changed, an added and a removed field, and the name, by path; key order does not matter', () => {
    const before = doc([b('a', { headline: 'Old', count: 1, meta: { a: 1, b: 2 } })])
    const after = doc([b('a', { headline: 'New', featured: true, meta: { b: 2, a: 1 } })])
    expect(diffStories({ name: 'One', content: before }, { name: 'Two', content: after })).toEqual([
      { kind: 'changed', path: 'name', before: 'One', after: 'Two' },
      { kind: 'changed', path: 'blocks/0/headline', component: 'teaser', before: 'Old', after: 'New' },
      { kind: 'removed', path: 'blocks/0/count', component: 'teaser', before: '1', after: undefined },
      { kind: 'added', path: 'blocks/0/featured', component: 'teaser', before: undefined, after: 'true' },
    ])
  })

  test('blocks added, removed and moved, nested ones by their path in the newer version', () => {
    const before = doc([b('a', { body: [b('n1', { headline: 'inner' })] }), b('b'), b('c', { headline: 'gone' })])
    const after = doc([b('b'), b('a', { body: [b('n1', { headline: 'inner' }), b('n2', { headline: 'new' })] })])
    const changes = diffStories({ content: before }, { content: after })
    expect(changes).toContainEqual({ kind: 'added', path: 'blocks/1/body/1', component: 'teaser', after: 'headline: new' })
    expect(changes).toContainEqual({ kind: 'removed', path: 'blocks/2', component: 'teaser', before: 'headline: gone' })
    // One of a and b moved (the other kept its relative order); n1 moved with its parent and is not reported.
    expect(changes.filter((c) => c.kind === 'moved')).toHaveLength(1)
    expect(changes.some((c) => c.path.startsWith('blocks/1/body/0'))).toBe(false)
  })

  test('a block moved into another list is a move', () => {
    const before = doc([b('a', { body: [] }), b('x', { headline: 'h' })])
    const after = doc([b('a', { body: [b('x', { headline: 'h' })] })])
    expect(diffStories({ content: before }, { content: after })).toEqual([{ kind: 'moved', path: 'blocks/0/body/0', component: 'teaser', before: 'blocks/1', after: 'blocks/0/body/0' }])
  })

  test('values are text: markup stays as written, richtext becomes its text, lists are joined, links by URL', () => {
    expect(asText('<b>x</b>')).toBe('<b>x</b>')
    expect(asText({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Hello ' }, { type: 'text', text: '<world>' }] }, { type: 'paragraph', content: [{ type: 'text', text: 'Two' }] }] })).toBe(
      'Hello <world>\nTwo',
    )
    expect(asText(['a', 'b'])).toBe('a, b')
    expect(asText({ url: '/contact' })).toBe('/contact')
    expect(asText({ id: 3, alt: 'x' })).toBe('{"id":3,"alt":"x"}')
    expect(asText(undefined)).toBe('')
  })

  test('content that is not a block document gives no block changes', () => {
    expect(diffStories({ content: null }, { content: { blocks: 'nope' } })).toEqual([])
  })
})

describe('duplicateBlock', () => {
  test('a deep copy with a new _uid for the block and every nested block; other values kept', () => {
    const original = b('a', { headline: 'h', link: { url: '/x' }, body: [b('n1', { items: [b('n2')] })] })
    const copy = duplicateBlock(original)
    expect(copy._uid).not.toBe('a')
    const body = copy.body as { _uid: string; items: { _uid: string }[] }[]
    expect(body[0]._uid).not.toBe('n1')
    expect(body[0].items[0]._uid).not.toBe('n2')
    expect(copy.headline).toBe('h')
    expect(copy.link).toEqual({ url: '/x' })
    expect(copy.link).not.toBe(original.link)
    expect(original.body).toEqual([b('n1', { items: [b('n2')] })])
  })
})
