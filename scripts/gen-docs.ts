// bun run gen:docs: the parts of docs/*.md that restate declarations in the code, written between markers
// (`<!-- generated: NAME … -->` … `<!-- end generated: NAME -->`). Today: the webhook event table of
// docs/webhooks.md, from the modules' event declarations (`events`: description, `webhook`, `body`).
// test/webhook-docs.test.ts fails when a checked-in doc differs from what this writes. `--check` writes nothing and
// exits 1 when a doc would change.
import { join } from 'node:path'
import { EventCatalog } from '../src/kernel/events'
import { MODULES } from '../src/modules'
import { PING_EVENT_DOC } from '../src/modules/webhooks/delivery'

export const WEBHOOKS_DOC = join(import.meta.dir, '..', 'docs', 'webhooks.md')

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ')

/** The table of the events a webhook may subscribe to, in module-list order, then `ping`. */
export function webhookEventTable(): string {
  const catalog = new EventCatalog()
  for (const m of MODULES) if (m.events) catalog.declare(m.name, m.events)
  const rows = catalog
    .all()
    .filter((e) => e.public)
    .map((e) => {
      if (!e.body) throw new Error(`event "${e.type}" (module ${e.module}) is public but declares no \`body\` for docs/webhooks.md`)
      const body = e.body.startsWith('`space: ') ? e.body : `\`space: {slug}\`, ${e.body}`
      return `| \`${e.type}\` | ${e.module} | ${cell(e.description)} | ${cell(body)} |`
    })
  rows.push(`| \`ping\` | webhooks | ${cell(PING_EVENT_DOC.description)} | \`space: {slug}\`, ${cell(PING_EVENT_DOC.body)} |`)
  return ['| Event | Module | Triggered by | Body after `event`, `delivered_at` |', '|---|---|---|---|', ...rows].join('\n')
}

/** `doc` with the block NAME replaced by `content`; throws when the markers are missing. */
export function replaceGenerated(doc: string, name: string, content: string): string {
  const start = new RegExp(`<!-- generated: ${name}[^>]*-->\\n`)
  const end = `<!-- end generated: ${name} -->`
  const m = start.exec(doc)
  const endAt = doc.indexOf(end)
  if (!m || endAt < m.index) throw new Error(`markers of the generated block "${name}" not found`)
  const from = m.index + m[0].length
  return `${doc.slice(0, from)}${content}\n${doc.slice(endAt)}`
}

/** Every generated doc as it should be checked in: [path, text]. */
export async function generateDocs(): Promise<[string, string][]> {
  const webhooks = await Bun.file(WEBHOOKS_DOC).text()
  return [[WEBHOOKS_DOC, replaceGenerated(webhooks, 'webhook-events', webhookEventTable())]]
}

if (import.meta.main) {
  const check = process.argv.includes('--check')
  let stale = false
  for (const [path, text] of await generateDocs()) {
    if ((await Bun.file(path).text()) === text) continue
    stale = true
    if (!check) {
      await Bun.write(path, text)
      console.log(`wrote ${path}`)
    }
  }
  if (check && stale) process.exit(1)
}
