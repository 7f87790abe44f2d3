/**
 * The admin app's typed API client is generated from this service's own OpenAPI description
 * (scripts/gen-admin-api.ts → admin/src/api/schema.d.ts), and so is the table of each Space operation's minimum role
 * (admin/src/api/min-roles.ts, from the routes' `x-min-role`). An API change must come with the regenerated files, so
 * that whatever in the app it breaks fails `bun run typecheck`, and the app hides no control it should show.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { generateAdminFiles, MIN_ROLES_FILE, SCHEMA_FILE } from '../scripts/gen-admin-api'

setDefaultTimeout(120_000)

test('admin/src/api/schema.d.ts and min-roles.ts are generated from the current OpenAPI description (else: bun run gen:admin-api)', async () => {
  const expected = await generateAdminFiles()
  const current = await Bun.file(SCHEMA_FILE).text()
  if (current !== expected.schema) throw new Error('admin/src/api/schema.d.ts is stale: run `bun run gen:admin-api` and commit the result.')
  expect(current).toContain('"/v1/spaces/{space}/stories/{uuid}"')
  const roles = await Bun.file(MIN_ROLES_FILE).text()
  if (roles !== expected.minRoles) throw new Error('admin/src/api/min-roles.ts is stale: run `bun run gen:admin-api` and commit the result.')
  // Every guard kind declares its minimum role: Space routes for people (comments) as well as for any token.
  expect(roles).toContain('"POST /v1/spaces/{space}/stories": "editor"')
  expect(roles).toContain('"GET /v1/spaces/{space}/stories": "viewer"')
  expect(roles).toContain('"POST /v1/spaces/{space}/tokens": "admin"')
  expect(roles).toMatch(/"POST \/v1\/spaces\/\{space\}\/stories\/\{uuid\}\/comments": "(viewer|editor)"/)
})
