// Builds dist/: the command (cli.js, one file for Node 20+, commands split out so start-up loads only the one run)
// and the type generator as a library (typegen.js + declarations). `npm pack` runs it (prepack).
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
const dist = join(root, 'dist')
rmSync(dist, { recursive: true, force: true })
const out = await Bun.build({
  entrypoints: [join(root, 'src', 'cli.ts'), join(root, 'src', 'typegen.ts'), join(root, 'src', 'migration-types.ts')],
  outdir: dist,
  format: 'esm',
  target: 'node',
  splitting: true,
  minify: { syntax: true, whitespace: true },
})
if (!out.success) throw new AggregateError(out.logs, 'build failed')
const cli = join(dist, 'cli.js')
writeFileSync(cli, `#!/usr/bin/env node\n${readFileSync(cli, 'utf8').replace(/^#!.*\n/, '')}`)
chmodSync(cli, 0o755)
const tsc = Bun.spawnSync(['bun', 'x', 'tsc', '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
if (tsc.exitCode !== 0) throw new Error('declarations: tsc failed')
