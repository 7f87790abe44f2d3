// Builds dist/: the integration and loaders as one ESM module for Node (astro and @content-service/sdk stay imports),
// and its declarations (tsc). The .astro components ship as source (Astro compiles them). `npm pack` runs it (prepack).
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
const dist = join(root, 'dist')
rmSync(dist, { recursive: true, force: true })
// The declarations import the SDK's: in the workspace, build it first when it is not built.
const sdk = join(root, '..', 'sdk')
if (existsSync(join(sdk, 'scripts', 'build.ts')) && !existsSync(join(sdk, 'dist', 'index.d.ts'))) {
  const b = Bun.spawnSync(['bun', join(sdk, 'scripts', 'build.ts')], { cwd: sdk, stdout: 'inherit', stderr: 'inherit' })
  if (b.exitCode !== 0) throw new Error('@content-service/sdk: build failed')
}
const out = await Bun.build({
  entrypoints: [join(root, 'src', 'index.ts')],
  outdir: dist,
  format: 'esm',
  target: 'node',
  external: ['astro', 'astro/*', '@content-service/sdk', '@content-service/sdk/*'],
  minify: { syntax: true },
})
if (!out.success) throw new AggregateError(out.logs, 'build failed')
const tsc = Bun.spawnSync(['bun', 'x', 'tsc', '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
if (tsc.exitCode !== 0) throw new Error('declarations: tsc failed')
