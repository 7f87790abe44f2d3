// bun run build → dist/content-service: one executable holding the server, its migrations, the embed scripts and
// PGlite's wasm and data files (imported `with { type: 'file' }` in src/kernel/pglite-assets.ts), and the image
// transform Worker with the AVIF codec's wasm files (src/modules/assets/avif-codec.ts), and the admin app (admin/index.html,
// imported by src/modules/admin/bundle.ts: Bun bundles it, with Tailwind through its plugin, and embeds the files).
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import tailwind from 'bun-plugin-tailwind'

const root = join(import.meta.dir, '..')
const outfile = join(root, 'dist', 'content-service')
mkdirSync(join(root, 'dist'), { recursive: true })

// `bun run bench` (scripts/bench/all.ts) builds once, then runs every bench with CS_BUILD_REUSE=1: each bench's own
// `bun run build` keeps that executable instead of building it again.
if (process.env.CS_BUILD_REUSE === '1' && existsSync(outfile)) {
  console.log(`reusing ${outfile} (CS_BUILD_REUSE=1)`)
  process.exit(0)
}

const bytecode = process.env.BUILD_BYTECODE !== '0'
const t0 = performance.now()

// The data folder initdb makes, embedded as a file (Bun.embeddedFiles): a first start on an empty DATA_DIR copies it
// instead of running initdb in WebAssembly (seconds, and about 1 GB of memory the process never gives back). Made by
// this very PGlite version, so it always matches the server in the executable.
const templateDir = mkdtempSync(join(tmpdir(), 'cs-pgdata-'))
const template = join(root, 'dist', 'pgdata-template.tar.gz')
{
  const pg = await PGlite.create(templateDir)
  await pg.query('select 1')
  await Bun.write(template, await pg.dumpDataDir('gzip'))
  await pg.close()
  rmSync(templateDir, { recursive: true, force: true })
}
const result = await Bun.build({
  // The transform Worker is an entrypoint of its own: `new Worker(...)` finds it inside the executable.
  entrypoints: [join(root, 'bin', 'content-service.ts'), join(root, 'src', 'modules', 'assets', 'transform-worker.ts'), template],
  // Bun's HTTP parser answers a request line and headers over --max-http-header-size (default 16 KiB) with a bare
  // 431 before our code runs; at 128 KiB, long URLs (GraphQL GET queries) meet our own 414 at 64 KiB instead
  // (MAX_URL_BYTES in src/kernel/http.ts), in the shared error shape.
  compile: { outfile, execArgv: ['--max-http-header-size=131072'] },
  // Bytecode compiled ahead of time (JavaScriptCore's, for this Bun version) is embedded beside the source: a start
  // skips parsing and compiling the bundle's JavaScript. Measured (scripts/bench/startup.ts, docs/performance.md):
  // CPU time to the first 200 of a restart 13–30% lower in two A/B runs on a loaded machine, the same RSS, an
  // executable 14 MB larger.
  // BUILD_BYTECODE=0 builds without it (for A/B runs).
  bytecode,
  format: 'esm',
  // Chunk splitting, which the admin app's HTML import is bundled with too: every screen (admin/src/router.tsx imports
  // each lazily) and the rich-text editor become chunks of their own, embedded and served from /admin/assets/.
  splitting: true,
  minify: true,
  plugins: [tailwind],
  define: { 'process.env.NODE_ENV': '"production"' },
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
const mb = (statSync(outfile).size / 1024 / 1024).toFixed(1)
console.log(`built ${outfile} (${mb} MB${bytecode ? ', with bytecode' : ''}) in ${Math.round(performance.now() - t0)} ms`)
