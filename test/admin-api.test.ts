/**
 * The admin app's typed API client is generated from this service's own OpenAPI description
 * (scripts/gen-admin-api.ts → admin/src/api/schema.d.ts). An API change must come with the regenerated file, so
 * that whatever in the app it breaks fails `bun run typecheck`.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { generateAdminApi, SCHEMA_FILE } from '../scripts/gen-admin-api'

setDefaultTimeout(120_000)

test('admin/src/api/schema.d.ts is generated from the current OpenAPI description (else: bun run gen:admin-api)', async () => {
  const expected = await generateAdminApi()
  const current = await Bun.file(SCHEMA_FILE).text()
  if (current !== expected) throw new Error('admin/src/api/schema.d.ts is stale: run `bun run gen:admin-api` and commit the result.')
  expect(current).toContain('"/v1/spaces/{space}/stories/{uuid}"')
})
