/**
 * docs/webhooks.md's event table is generated from the modules' event declarations (scripts/gen-docs.ts): a module
 * that adds, renames or reshapes a public event must regenerate it (`bun run gen:docs`), else this fails.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { EventCatalog } from '../src/kernel/events'
import { MODULES } from '../src/modules'
import { generateDocs, replaceGenerated, webhookEventTable } from '../scripts/gen-docs'

setDefaultTimeout(60_000)

test('the generated parts of docs/*.md match the declarations (else: bun run gen:docs)', async () => {
  for (const [path, expected] of await generateDocs()) {
    const current = await Bun.file(path).text()
    if (current !== expected) throw new Error(`${path} is stale: run \`bun run gen:docs\` and commit the result.`)
  }
})

test('the webhook event table lists every public event once, with its body, and no internal one', () => {
  const catalog = new EventCatalog()
  for (const m of MODULES) if (m.events) catalog.declare(m.name, m.events)
  const table = webhookEventTable()
  const listed = [...table.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1])
  expect(listed).toEqual([...catalog.publicTypes(), 'ping'])
  for (const e of catalog.all()) {
    if (e.public) expect(e.body, `public event ${e.type} declares its webhook body`).toBeTruthy()
  }
  expect(listed).toContain('story.published')
  expect(listed).not.toContain('story.moved')
})

test('a generated block is replaced between its markers only', () => {
  const doc = 'before\n<!-- generated: x (how) -->\nold\n<!-- end generated: x -->\nafter\n'
  expect(replaceGenerated(doc, 'x', 'new')).toBe('before\n<!-- generated: x (how) -->\nnew\n<!-- end generated: x -->\nafter\n')
  expect(() => replaceGenerated('no markers', 'x', 'new')).toThrow()
})
