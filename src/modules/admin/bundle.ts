import { basename } from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants as zlib, gzip } from 'node:zlib'
import { etagOf } from '../../kernel/public-answer'
// Bun's HTML import: `bun build --compile` bundles the app (React, the router, Tailwind through the build's plugin)
// and embeds its files; the import is then a manifest `{index, files: [{path, loader, headers}]}` of embedded files.
// Run from source (`bun run`, `bun test`) it is a bare HTMLBundle naming index.html: the files are built on first use.
import adminPage from '../../../admin/index.html'

/** Where the app lives: the HTML at /admin (and every client route below it), hashed files under /admin/assets/. */
export const ADMIN_BASE = '/admin'
export const ASSET_PREFIX = `${ADMIN_BASE}/assets/`

export interface AdminFile {
  name: string
  type: string
  body: Uint8Array<ArrayBuffer>
  etag: string
  /** Compressed once, when the bundle is loaded (zlib's thread pool: the event loop does not wait for it). */
  gzip?: Uint8Array<ArrayBuffer>
  br?: Uint8Array<ArrayBuffer>
}

export interface AdminBundle {
  index: AdminFile
  /** Hashed files by name (`chunk-4f3a9c.js`). */
  assets: Map<string, AdminFile>
}

interface Manifest {
  index: string
  files?: { path: string; loader: string; headers?: Record<string, string> }[]
}

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  html: 'text/html; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  woff2: 'font/woff2',
}
const typeOf = (name: string) => TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream'

function file(name: string, body: Uint8Array<ArrayBuffer>): AdminFile {
  return { name, type: typeOf(name), body, etag: etagOf(body) }
}

/**
 * The bundler writes root-absolute URLs (`/chunk-x.js`) into the HTML and, with `splitting`, into the chunks (static
 * `import … from "/chunk-x.js"` and the screens' `import("/chunk-x.js")`); the app is served under /admin/assets/.
 * Only quoted references to files of the bundle are rewritten. (`publicPath` would do this for a browser build, but the
 * HTML import of `bun build --compile` ignores it, so both ways of building go through here.)
 */
export function rebase(text: string, names: string[]): string {
  if (!names.length) return text
  // One pass over the text (two replaceAll per name made two copies of every file per name: ~100 MB of strings for
  // the app's few dozen chunks, just after start-up).
  const alternatives = names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')
  return text.replace(new RegExp(`"\\.?/(${alternatives})"`, 'g'), (_m, name: string) => `"${ASSET_PREFIX}${name}"`)
}

const REBASED = /^(text\/(javascript|css|html))/

const brotliAsync = promisify(brotliCompress)
const gzipAsync = promisify(gzip)
// Small files gain nothing from compression.
const compressible = (f: AdminFile) => f.body.byteLength >= 1024 && /^(text\/|image\/svg)/.test(f.type)

// Brotli quality 9, not 11: the app's ~710 KB of JavaScript (all chunks) compresses to ~200 KB in about 0.1 s; quality 11 saves ~5% for
// over a second of CPU at every start (measured); gzip 9 is the fallback.
// One file at a time, and a brotli window no larger than the file: every compressor running at once holds its window
// and hash tables (brotli's default 4 MB window: tens of MB each), and compressing all the app's files in parallel at
// start-up took the process ~250 MB above its resting RSS for a moment (measured on the executable).
async function compress(f: AdminFile): Promise<void> {
  if (!compressible(f)) return
  const window = Math.min(zlib.BROTLI_MAX_WINDOW_BITS, Math.max(zlib.BROTLI_MIN_WINDOW_BITS, Math.ceil(Math.log2(f.body.byteLength + 1))))
  const br = await brotliAsync(f.body, {
    params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: f.body.byteLength, [zlib.BROTLI_PARAM_LGWIN]: window },
  })
  const gz = await gzipAsync(f.body, { level: 9 })
  f.br = new Uint8Array(br)
  f.gzip = new Uint8Array(gz)
}

async function assemble(htmlText: string, raw: AdminFile[]): Promise<AdminBundle> {
  const names = raw.map((a) => a.name)
  const html = rebase(htmlText, names)
  const index = file('index.html', new TextEncoder().encode(html))
  // The chunks name each other: their references move below /admin/assets/ too (the ETag is of the served bytes).
  const assets = raw.map((a) => (REBASED.test(a.type) ? file(a.name, new TextEncoder().encode(rebase(new TextDecoder().decode(a.body), names))) : a))
  for (const f of [index, ...assets]) await compress(f)
  return { index, assets: new Map(assets.map((a) => [a.name, a])) }
}

async function fromManifest(m: Manifest & { files: NonNullable<Manifest['files']> }): Promise<AdminBundle> {
  let html = ''
  const assets: AdminFile[] = []
  for (const f of m.files) {
    const bytes = new Uint8Array(await Bun.file(f.path).arrayBuffer())
    if (f.path.endsWith('.html')) html = new TextDecoder().decode(bytes)
    else assets.push(file(basename(f.path), bytes))
  }
  return assemble(html, assets)
}

/**
 * From source: Bun's bundler in this process, with the same plugin as scripts/build.ts. The plugin is imported by a
 * computed name so that `bun build --compile` does not pull the Tailwind compiler into the executable (which serves
 * the embedded files and never comes here).
 */
async function fromSource(entry: string): Promise<AdminBundle> {
  const pluginName = 'bun-plugin-tailwind'
  const tailwind = (await import(pluginName)).default
  const result = await Bun.build({
    entrypoints: [entry],
    target: 'browser',
    // Every screen a chunk of its own (router.tsx imports them lazily), as in the executable (scripts/build.ts).
    splitting: true,
    minify: true,
    plugins: [tailwind],
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  if (!result.success) throw new AggregateError(result.logs, 'the admin app did not build')
  let html = ''
  const assets: AdminFile[] = []
  for (const out of result.outputs) {
    const bytes = new Uint8Array(await out.arrayBuffer())
    const name = basename(out.path)
    if (name.endsWith('.html')) html = new TextDecoder().decode(bytes)
    else assets.push(file(name, bytes))
  }
  return assemble(html, assets)
}

// One build per process, shared by every runtime in it (tests build many): the input is the files on disk.
let loading: Promise<AdminBundle> | undefined

export function loadAdminBundle(): Promise<AdminBundle> {
  if (!loading) {
    const m = adminPage as unknown as Manifest
    loading = Array.isArray(m.files) ? fromManifest(m as Manifest & { files: NonNullable<Manifest['files']> }) : fromSource(m.index)
    loading.catch(() => {
      loading = undefined
    })
  }
  return loading
}

/** Whether Accept-Encoding lists `coding` with a weight above 0. */
function accepts(header: string, coding: string): boolean {
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';')
    if (name.trim().toLowerCase() !== coding) continue
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='))
    return q === undefined || Number(q.slice(2)) > 0
  }
  return false
}

/** The body for this Accept-Encoding: brotli, then gzip (both made at load), else identity. */
export function encodedBody(f: AdminFile, acceptEncoding: string | null): { body: Uint8Array<ArrayBuffer>; encoding: 'br' | 'gzip' | null } {
  if (acceptEncoding) {
    if (f.br && accepts(acceptEncoding, 'br')) return { body: f.br, encoding: 'br' }
    if (f.gzip && accepts(acceptEncoding, 'gzip')) return { body: f.gzip, encoding: 'gzip' }
  }
  return { body: f.body, encoding: null }
}
