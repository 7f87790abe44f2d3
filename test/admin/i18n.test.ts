/**
 * Every screen and component of the admin app takes its text from the message catalogs (admin/src/i18n): no text
 * between JSX tags and no literal label, title or placeholder attribute in any `.tsx` file (admin/README.md,
 * "Translating"). The catalogs themselves are checked by the type checker (de.ts is
 * `Record<MessageKey, string>`) and here for placeholders: a German text fills the same `{names}` as the English.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import ts from 'typescript'
import { de } from '../../admin/src/i18n/de'
import { en, type MessageKey } from '../../admin/src/i18n/en'
import { featureCatalogs } from './helpers'

setDefaultTimeout(60_000)

const ADMIN = join(import.meta.dir, '..', '..', 'admin', 'src')
/** Every screen and component of the app (`.tsx` below admin/src): each takes its text from the catalogs. */
const CATALOGUED = [...new Bun.Glob('**/*.tsx').scanSync({ cwd: ADMIN })].sort()

const READ_ATTRIBUTES = new Set(['aria-label', 'title', 'placeholder', 'label', 'hint', 'alt', 'what'])

/** Text a person would read that is not an expression: `<p>Save</p>`, `aria-label="Save"` (parsed as TSX). */
export function hardCoded(source: string): string[] {
  const found: string[] = []
  const file = ts.createSourceFile('screen.tsx', source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX)
  const visit = (node: ts.Node) => {
    if (ts.isJsxText(node) && /[A-Za-zÀ-ž]{2}/.test(node.text)) found.push(node.text.trim())
    if (ts.isJsxAttribute(node) && READ_ATTRIBUTES.has(node.name.getText(file)) && node.initializer && ts.isStringLiteral(node.initializer) && /[A-Za-z]{2}/.test(node.initializer.text))
      found.push(`${node.name.getText(file)}="${node.initializer.text}"`)
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

describe('message catalogs', () => {
  test('no screen holds a hard-coded string', async () => {
    // The glob finds the app (a wrong folder would find nothing and prove nothing).
    expect(CATALOGUED).toContain('routes/story-editor.tsx')
    expect(CATALOGUED).toContain('features/settings/settings-screen.tsx')
    expect(CATALOGUED.length).toBeGreaterThan(40)
    for (const file of CATALOGUED) {
      const source = await Bun.file(join(ADMIN, file)).text()
      expect({ file, strings: hardCoded(source) }).toEqual({ file, strings: [] })
    }
    // The check finds what it should.
    expect(hardCoded('<p>Save now</p><Button aria-label="Remove it">{t("x")}</Button>')).toEqual(['Save now', 'aria-label="Remove it"'])
  })

  test('German fills the same placeholders as English', async () => {
    const names = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()
    for (const key of Object.keys(en) as MessageKey[]) expect({ key, names: names(de[key]) }).toEqual({ key, names: names(en[key]) })
    // The screens' own catalogs (features/<feature>/messages.ts, loaded with their chunks) too.
    const catalogs = await featureCatalogs()
    expect(catalogs.length).toBeGreaterThanOrEqual(4)
    for (const c of catalogs) for (const key of Object.keys(c.en)) expect({ key, names: names(c.de[key]!) }).toEqual({ key, names: names(c.en[key]!) })
  })
})
