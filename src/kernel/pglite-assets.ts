// @ts-nocheck: `with { type: 'file' }` is a Bun import attribute TypeScript does not type.
// PGlite's wasm modules and file-system bundle, imported as files so `bun build --compile` embeds them in the
// executable (a plain compile fails with ENOENT '/$bunfs/root/pglite.data'). In development these are the paths
// inside node_modules; in the compiled binary they are paths inside its embedded file system.
import pgliteWasmPath from '../../node_modules/@electric-sql/pglite/dist/pglite.wasm' with { type: 'file' }
import initdbWasmPath from '../../node_modules/@electric-sql/pglite/dist/initdb.wasm' with { type: 'file' }
import pgliteDataPath from '../../node_modules/@electric-sql/pglite/dist/pglite.data' with { type: 'file' }

export const pgliteAssetPaths: { pgliteWasm: string; initdbWasm: string; pgliteData: string } = {
  pgliteWasm: pgliteWasmPath,
  initdbWasm: initdbWasmPath,
  pgliteData: pgliteDataPath,
}

/**
 * The data folder initdb makes, as a gzipped tarball made by `bun run build` (scripts/build.ts) and embedded in the
 * executable: a first start copies it instead of running initdb. Undefined when running from source.
 */
export function pgliteTemplate(): Blob | undefined {
  return Bun.embeddedFiles.find((f) => (f as Blob & { name?: string }).name?.startsWith('pgdata-template')) as Blob | undefined
}
