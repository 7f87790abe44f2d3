/**
 * The screens that take their text from the message catalogs (admin/src/i18n) hold no hard-coded UI string: no text
 * between JSX tags and no literal label, title or placeholder attribute. Screens join the list as their strings move
 * to the catalog (admin/README.md, "Translating"). The catalogs themselves are checked by the type checker (de.ts is
 * `Record<MessageKey, string>`) and here for placeholders: a German text fills the same `{names}` as the English.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import ts from 'typescript'
import { de } from '../../admin/src/i18n/de'
import { en, type MessageKey } from '../../admin/src/i18n/en'

setDefaultTimeout(60_000)

const ADMIN = join(import.meta.dir, '..', '..', 'admin', 'src')
const CATALOGUED = [
  'routes/invite.tsx',
  'routes/members.tsx',
  'routes/tokens.tsx',
  'routes/sign-in.tsx',
  'routes/register.tsx',
  'routes/spaces.tsx',
  'routes/space-layout.tsx',
  'components/shell.tsx',
  'components/route-focus.tsx',
  'components/catalog-error.tsx',
  'components/notice.tsx',
  'components/schedule.tsx',
  'components/blueprint-parts.tsx',
  'components/pager.tsx',
  'components/versions.tsx',
]

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
  test('the catalogued screens hold no hard-coded string', async () => {
    for (const file of CATALOGUED) {
      const source = await Bun.file(join(ADMIN, file)).text()
      expect({ file, strings: hardCoded(source) }).toEqual({ file, strings: [] })
    }
    // The check finds what it should.
    expect(hardCoded('<p>Save now</p><Button aria-label="Remove it">{t("x")}</Button>')).toEqual(['Save now', 'aria-label="Remove it"'])
  })

  test('German fills the same placeholders as English', () => {
    const names = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()
    for (const key of Object.keys(en) as MessageKey[]) expect({ key, names: names(de[key]) }).toEqual({ key, names: names(en[key]) })
  })
})
