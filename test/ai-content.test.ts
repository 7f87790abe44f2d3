import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { parseJsonAnswer } from '../src/modules/ai/content'

setDefaultTimeout(10_000)

describe('parseJsonAnswer', () => {
  test('a one-element list stays a list (not the object inside it)', () => {
    expect(parseJsonAnswer('[{"id": 0, "text": "Piers", "score": 0.9}]')).toEqual([{ id: 0, text: 'Piers', score: 0.9 }])
    expect(parseJsonAnswer('Here you go:\n```json\n[{"id": 1}]\n```')).toEqual([{ id: 1 }])
  })
  test('an object, a list of strings, chatter around them, nothing', () => {
    expect(parseJsonAnswer('Sure! {"title": "A [draft] title", "description": "x"} Hope it helps.')).toEqual({ title: 'A [draft] title', description: 'x' })
    expect(parseJsonAnswer('["a", "b"]')).toEqual(['a', 'b'])
    expect(parseJsonAnswer('[{"id": 1}, {"id": 2}]')).toEqual([{ id: 1 }, { id: 2 }])
    expect(parseJsonAnswer('no JSON here')).toBeUndefined()
  })
})
