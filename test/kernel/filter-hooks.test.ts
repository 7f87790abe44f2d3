import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { AppError, defineError } from '../../src/kernel/errors'
import { type FilterActor, type FilterCall, FilterHooks } from '../../src/kernel/filters'
import { defineModule } from '../../src/kernel/module'
import { type TestApp, testApp } from '../helpers/app'

setDefaultTimeout(60_000)

/**
 * The `filters` slot of the module contract (kernel/filters.ts), with probe modules that are not part of the product:
 * one owns two hooks, three others handle them. The kernel runs handlers in module-list order and names no module.
 */
declare module '../../src/kernel/filters' {
  interface FilterMap {
    'probe.before_change': { value: string }
    'probe.before_remove': { id: number }
  }
}

const calls: string[] = []
let wantsSecond = true
const refused = defineError('probe_refused', 422, 'A probe refused the change.')

const ownerModule = defineModule({
  name: 'probe-owner',
  filterHooks: {
    'probe.before_change': { description: 'Before a probe change (amendable).', amend: true, routes: [] },
    'probe.before_remove': { description: 'Before a probe removal.', amend: false, routes: [] },
  },
})
const firstModule = defineModule({
  name: 'probe-first',
  filters: {
    'probe.before_change': (payload, call) => {
      calls.push(`first:${call.hook}:${payload.value}`)
      return { value: `${payload.value}+first` }
    },
    'probe.before_remove': (payload) => {
      calls.push(`first:remove:${payload.id}`)
      return { id: payload.id + 1 } // not amendable: ignored
    },
  },
})
const secondModule = defineModule({
  name: 'probe-second',
  filters: {
    '*': {
      wants: () => wantsSecond,
      run: (payload: unknown, call: FilterCall) => {
        calls.push(`second:${call.hook}:${JSON.stringify(payload)}`)
        if ((payload as { value?: string }).value === 'veto+first') throw refused('no vetoes here', { value: ['is refused'] })
      },
    },
  },
})
const thirdModule = defineModule({
  name: 'probe-third',
  filters: {
    'probe.before_change': async (payload) => {
      calls.push(`third:${payload.value}`)
    },
  },
})

let t: TestApp
let actor: FilterActor
beforeAll(async () => {
  t = await testApp({}, {}, { modules: [ownerModule, firstModule, secondModule, thirdModule] })
  actor = { space: { id: 1, slug: 'probe' }, kind: 'public', userId: null, tokenId: null }
})
afterAll(async () => {
  await t?.close()
})

describe('filter hooks run before a change, in module order', () => {
  test('handlers run in list order, each seeing the amendment before it; the result is the last replacement', async () => {
    calls.length = 0
    const payload = { value: 'a' }
    const out = await t.kernel.filters.run('probe.before_change', payload, actor)
    expect(out).toEqual({ value: 'a+first' })
    expect(out).not.toBe(payload)
    expect(calls).toEqual(['first:probe.before_change:a', 'second:probe.before_change:{"value":"a+first"}', 'third:a+first'])
  })

  test('a replacement on a hook that cannot be amended is ignored: the caller gets its own payload back', async () => {
    calls.length = 0
    const payload = { id: 7 }
    const out = await t.kernel.filters.run('probe.before_remove', payload, actor)
    expect(out).toBe(payload)
    expect(calls).toEqual(['first:remove:7', 'second:probe.before_remove:{"id":7}'])
  })

  test('a handler that throws vetoes: the error reaches the caller and later handlers do not run', async () => {
    calls.length = 0
    const err = await t.kernel.filters.run('probe.before_change', { value: 'veto' }, actor).catch((e) => e)
    expect(err).toBeInstanceOf(AppError)
    expect(err).toMatchObject({ status: 422, code: 'probe_refused', fields: { value: ['is refused'] } })
    expect(calls).toEqual(['first:probe.before_change:veto', 'second:probe.before_change:{"value":"veto+first"}'])
  })

  test('a handler that does not want the call is skipped, and `active` says whether anyone wants it', async () => {
    wantsSecond = false
    try {
      calls.length = 0
      await t.kernel.filters.run('probe.before_remove', { id: 1 }, actor)
      expect(calls).toEqual(['first:remove:1'])
      expect(t.kernel.filters.active('probe.before_remove', actor)).toBe(true)
    } finally {
      wantsSecond = true
    }
  })

  test('the catalog lists the declared hooks with their owner', () => {
    expect(t.kernel.filters.names()).toEqual(['probe.before_change', 'probe.before_remove'])
    expect(t.kernel.filters.declaration('probe.before_change')).toMatchObject({ module: 'probe-owner', amend: true })
  })

  test('a handler of an undeclared hook, or a hook declared twice, is refused', () => {
    const hooks = new FilterHooks()
    hooks.declare('probe-owner', { 'probe.before_change': { description: 'x', amend: true, routes: [] } })
    expect(() => hooks.add('probe-stray', 'probe.before_remove', { run: () => undefined })).toThrow(/no module declares/)
    expect(() => hooks.declare('probe-twice', { 'probe.before_change': { description: 'x', amend: false, routes: [] } })).toThrow(
      /declared by probe-owner and probe-twice/,
    )
  })
})
