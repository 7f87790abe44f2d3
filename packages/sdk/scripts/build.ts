// Builds dist/: one ESM file per entry (index, image, richtext, editable, validate) for any runtime, and their
// declarations (tsc), with the generated API types beside them. `npm pack` runs it (prepack).
import { cpSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
const dist = join(root, 'dist')
rmSync(dist, { recursive: true, force: true })
const entries = ['index', 'image', 'richtext', 'editable', 'validate'].map((e) => join(root, 'src', `${e}.ts`))
const out = await Bun.build({ entrypoints: entries, outdir: dist, format: 'esm', target: 'browser', external: ['openapi-fetch'], minify: { syntax: true } })
if (!out.success) throw new AggregateError(out.logs, 'build failed')
const tsc = Bun.spawnSync(['bun', 'x', 'tsc', '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
if (tsc.exitCode !== 0) throw new Error('declarations: tsc failed')
mkdirSync(join(dist, 'api'), { recursive: true })
cpSync(join(root, 'src', 'api', 'schema.d.ts'), join(dist, 'api', 'schema.d.ts'))
