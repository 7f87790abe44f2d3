// bun scripts/long-code.ts [limit=300]: every class and function in src/ longer than `limit` lines, and whether the
// reason is written at its top (a comment right above it that starts with "Why one"). Exits 1 when one has none.
// test/code-size.test.ts runs it.
import ts from 'typescript'
import { join } from 'node:path'

export interface LongCode {
  lines: number
  where: string
  name: string
  reasoned: boolean
}

export async function longCode(root = join(import.meta.dir, '..'), limit = 300): Promise<LongCode[]> {
  const out: LongCode[] = []
  for (const file of new Bun.Glob('src/**/*.{ts,tsx}').scanSync({ cwd: root })) {
    const text = await Bun.file(join(root, file)).text()
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
    const visit = (n: ts.Node) => {
      if (ts.isClassLike(n) || ts.isFunctionLike(n)) {
        const from = sf.getLineAndCharacterOfPosition(n.getStart()).line + 1
        const lines = sf.getLineAndCharacterOfPosition(n.getEnd()).line + 2 - from
        if (lines > limit) {
          const holder = ts.isVariableDeclaration(n.parent) ? n.parent.parent.parent : n
          const comments = ts.getLeadingCommentRanges(text, holder.getFullStart()) ?? []
          const reasoned = comments.some((c) => /^\/\*\*?\s*\n?\s*\*?\s*Why one/.test(text.slice(c.pos, c.end)))
          const name = (n as { name?: ts.Node }).name?.getText(sf) ?? (ts.isVariableDeclaration(n.parent) ? n.parent.name.getText(sf) : '(anonymous)')
          out.push({ lines, where: `${file}:${from}`, name, reasoned })
        }
      }
      ts.forEachChild(n, visit)
    }
    visit(sf)
  }
  return out.sort((a, b) => b.lines - a.lines)
}

if (import.meta.main) {
  const found = await longCode(undefined, Number(process.argv[2] ?? 300))
  for (const f of found) console.log(`${String(f.lines).padStart(5)}  ${f.where}  ${f.name}${f.reasoned ? '' : '  — no reason at its top'}`)
  if (found.some((f) => !f.reasoned)) process.exit(1)
}
