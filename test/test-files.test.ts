import { expect, setDefaultTimeout, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

setDefaultTimeout(60_000)

// `bun test` alone (without --timeout) gives each test 5 s, too little for a file that starts databases and servers
// on a loaded machine. bunfig.toml cannot raise it and a preload's setDefaultTimeout reaches only the first file, so
// each file raises its own.
test('every test file sets its default timeout', () => {
  const dir = import.meta.dir
  const missing = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .filter((f) => !/^setDefaultTimeout\(\d[\d_]*\)/m.test(readFileSync(join(dir, f), 'utf8')))
  expect(missing).toEqual([])
})
