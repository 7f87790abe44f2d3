/**
 * Every query key of the admin app comes from one factory, admin/src/api/keys.ts (`queryKeys`): no screen or component
 * types a key as an array literal (`queryKey: ['/v1/spaces', space]`, or such an array held in a variable and passed
 * to `invalidateQueries`). A key typed by hand drifts from the one the read uses, and the invalidation silently misses.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import ts from 'typescript'

setDefaultTimeout(60_000)

const ADMIN = join(import.meta.dir, '..', '..', 'admin', 'src')
const FACTORY = 'api/keys.ts'
const SOURCES = [...new Bun.Glob('**/*.{ts,tsx}').scanSync({ cwd: ADMIN })].filter((f) => !f.endsWith('.d.ts') && f !== FACTORY).sort()

/** Literal array query keys in a source file: a `queryKey: [...]` property, or any array literal opening with an API path. */
export function literalKeys(source: string, name = 'file.tsx'): string[] {
  const found: string[] = []
  const file = ts.createSourceFile(name, source, ts.ScriptTarget.Latest, true, name.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAssignment(node) && node.name.getText(file) === 'queryKey' && ts.isArrayLiteralExpression(skipOuter(node.initializer)))
      found.push(node.getText(file))
    else if (ts.isArrayLiteralExpression(node)) {
      const first = node.elements[0]
      if (first && (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first)) && first.text.startsWith('/v1')) found.push(node.getText(file))
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

const skipOuter = (node: ts.Expression): ts.Expression =>
  ts.isAsExpression(node) || ts.isParenthesizedExpression(node) || ts.isSatisfiesExpression(node) ? skipOuter(node.expression) : node

describe('query keys', () => {
  test('come from the factory in api/keys.ts, nowhere typed by hand', async () => {
    // The glob finds the app (a wrong folder would find nothing and prove nothing).
    expect(SOURCES).toContain('routes/story-editor.tsx')
    expect(SOURCES).toContain('api/queries.ts')
    expect(SOURCES.length).toBeGreaterThan(60)
    for (const f of SOURCES) {
      const source = await Bun.file(join(ADMIN, f)).text()
      expect({ file: f, keys: literalKeys(source, f) }).toEqual({ file: f, keys: [] })
    }
    // The check finds what it should, and lets the factory's keys and other arrays pass.
    expect(
      literalKeys(
        "useQuery({ queryKey: ['spaces', space], queryFn })\n" +
          "qc.invalidateQueries({ queryKey: [...base, 1] as const })\n" +
          "const key = ['/v1/spaces', space, 'billing']\n" +
          "qc.invalidateQueries({ queryKey: queryKeys.space(space) })\n" +
          "const roles = ['viewer', 'editor']",
      ),
    ).toEqual(["queryKey: ['spaces', space]", 'queryKey: [...base, 1] as const', "['/v1/spaces', space, 'billing']"])
  })

  test('the factory keys reads by API path, so an invalidation by prefix reaches them', async () => {
    const { queryKeys } = await import('../../admin/src/api/keys')
    const prefixOf = (prefix: readonly unknown[], key: readonly unknown[]) => prefix.every((p, i) => JSON.stringify(p) === JSON.stringify(key[i]))
    expect(prefixOf(queryKeys.space('s'), queryKeys.storyIn('s', 'u', 'de'))).toBe(true)
    expect(prefixOf(queryKeys.stories('s'), queryKeys.comments('s', 'u'))).toBe(true)
    expect(prefixOf(queryKeys.story('s', 'u'), queryKeys.versions('s', 'u', 'en', 3))).toBe(true)
    expect(prefixOf(queryKeys.assets('s'), queryKeys.assetList('s', { q: '', page: 1 }))).toBe(true)
    expect(prefixOf(queryKeys.aiJobs('s'), queryKeys.aiJobList('s', { page: 1 }))).toBe(true)
    expect(prefixOf(queryKeys.resource('s', '/x'), queryKeys.resourceLog('s', '/x', {}, {}))).toBe(true)
    // Another Space's reads are not touched.
    expect(prefixOf(queryKeys.space('s'), queryKeys.storyIn('t', 'u'))).toBe(false)
  })
})
