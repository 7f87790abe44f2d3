import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { applyMemoryEnvironment, DEFAULT_HEAP_GROWTH, MEMORY_ENV_MARK, memoryBreakdown, memoryEnvironment } from '../src/kernel/memory'

setDefaultTimeout(60_000)

describe('JS_HEAP_GROWTH: the heap growth settings a long-running command starts with', () => {
  test('by default, a growth of 1.75 for hosts of any size', () => {
    expect(DEFAULT_HEAP_GROWTH).toBe(1.75)
    expect(memoryEnvironment({})).toEqual({ BUN_JSC_heapGrowthMaxIncrease: '0.75', BUN_JSC_smallHeapGrowthFactor: '1.75', MIMALLOC_PURGE_HOLES_MIN_INTERVAL: '0' })
  })

  test('a chosen growth, "default" for Bun\'s own, and settings already in the environment win', () => {
    const m = { MIMALLOC_PURGE_HOLES_MIN_INTERVAL: '0' }
    expect(memoryEnvironment({ JS_HEAP_GROWTH: '2' })).toEqual({ BUN_JSC_heapGrowthMaxIncrease: '1', BUN_JSC_smallHeapGrowthFactor: '2', ...m })
    expect(memoryEnvironment({ JS_HEAP_GROWTH: ' Default ' })).toEqual(m)
    expect(memoryEnvironment({ BUN_JSC_heapGrowthMaxIncrease: '0.5' })).toEqual({ BUN_JSC_smallHeapGrowthFactor: '1.75', ...m })
    expect(memoryEnvironment({ BUN_JSC_heapGrowthMaxIncrease: '1', BUN_JSC_smallHeapGrowthFactor: '2' })).toEqual(m)
    expect(memoryEnvironment({ BUN_JSC_heapGrowthMaxIncrease: '1', BUN_JSC_smallHeapGrowthFactor: '2', MIMALLOC_PURGE_HOLES_MIN_INTERVAL: '100' })).toEqual({})
    expect(memoryEnvironment({ JS_HEAP_GROWTH: 'default', MIMALLOC_PURGE_HOLES_MIN_INTERVAL: '100' })).toEqual({})
  })

  test('a malformed or out-of-range value is refused', () => {
    for (const v of ['abc', '1', '0.5', '5', '-2']) expect(() => memoryEnvironment({ JS_HEAP_GROWTH: v })).toThrow(/JS_HEAP_GROWTH/)
  })

  test('re-executes once with the settings and a mark; never again once marked, nor with nothing to add', () => {
    const calls: { file: string; args: string[]; env: Record<string, string | undefined> }[] = []
    const execve = ((file: string, args: string[], env: Record<string, string | undefined>) => {
      calls.push({ file, args, env })
    }) as unknown as (file: string, args: string[], env: Record<string, string | undefined>) => never
    applyMemoryEnvironment({ PATH: '/bin' }, execve)
    expect(calls.length).toBe(1)
    expect(calls[0].file).toBe(process.execPath)
    expect(calls[0].env.PATH).toBe('/bin')
    expect(calls[0].env.BUN_JSC_heapGrowthMaxIncrease).toBe('0.75')
    expect(calls[0].env[MEMORY_ENV_MARK]).toBeTruthy()
    expect(applyMemoryEnvironment(calls[0].env, execve)).toBe('already applied')
    expect(calls[0].env.MIMALLOC_PURGE_HOLES_MIN_INTERVAL).toBe('0')
    expect(applyMemoryEnvironment({ JS_HEAP_GROWTH: 'default', MIMALLOC_PURGE_HOLES_MIN_INTERVAL: '100' }, execve)).toBe('nothing to add')
    const refusing = (() => {
      throw new Error('ENOSYS')
    }) as unknown as typeof execve
    expect(applyMemoryEnvironment({}, refusing)).toBe('execve failed: ENOSYS')
    expect(calls.length).toBe(1)
  })

  test('a real process: the same pid and arguments after the re-execution, the settings in its environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cs-memory-env-'))
    const script = join(dir, 'probe.ts')
    writeFileSync(
      script,
      `import { applyMemoryEnvironment } from ${JSON.stringify(join(import.meta.dir, '..', 'src', 'kernel', 'memory.ts'))}
console.log(JSON.stringify({ pid: process.pid, args: process.argv.slice(2), growth: process.env.BUN_JSC_heapGrowthMaxIncrease ?? null }))
applyMemoryEnvironment()
`,
    )
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('BUN_JSC_') && k !== MEMORY_ENV_MARK && k !== 'JS_HEAP_GROWTH') env[k] = v
    const proc = Bun.spawn(['bun', script, 'serve', '--flag'], { env, stdout: 'pipe', stderr: 'inherit' })
    const out = await new Response(proc.stdout).text()
    expect(await proc.exited).toBe(0)
    const lines = out.trim().split('\n').map((l) => JSON.parse(l))
    expect(lines.length).toBe(2)
    expect(lines[0]).toEqual({ pid: proc.pid, args: ['serve', '--flag'], growth: null })
    expect(lines[1]).toEqual({ pid: proc.pid, args: ['serve', '--flag'], growth: '0.75' })
  })
})

test('the memory breakdown /metrics reports has every part', () => {
  const parts = memoryBreakdown()
  for (const k of ['js_heap', 'js_heap_capacity', 'js_extra', 'malloc_in_use', 'malloc_committed']) expect(typeof parts[k]).toBe('number')
  expect(parts.js_heap).toBeGreaterThan(0)
})
