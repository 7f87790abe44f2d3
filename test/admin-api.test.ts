/**
 * The admin app's typed API client is generated from this service's own OpenAPI description
 * (scripts/gen-admin-api.ts → admin/src/api/schema.d.ts), and so is the table of each Space operation's minimum role
 * (admin/src/api/min-roles.ts, from the routes' `x-min-role`). An API change must come with the regenerated files, so
 * that whatever in the app it breaks fails `bun run typecheck`, and the app hides no control it should show.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { ADMIN_MANIFEST } from '../admin/src/api/admin-manifest'
import { en } from '../admin/src/i18n/en'
import { generateAdminFiles, MANIFEST_FILE, MIN_ROLES_FILE, SCHEMA_FILE } from '../scripts/gen-admin-api'

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

test('admin/src/api/admin-manifest.ts is generated from the routes\' x-admin, and every label it names is in the catalogs', async () => {
  const expected = await generateAdminFiles()
  const current = await Bun.file(MANIFEST_FILE).text()
  if (current !== expected.manifest) throw new Error('admin/src/api/admin-manifest.ts is stale: run `bun run gen:admin-api` and commit the result.')
  // Fields come from the bodies' JSON Schema: the webhook's events are the catalog of public events, as a checklist.
  const create = ADMIN_MANIFEST.webhooks.create
  const events = create.fields.find((f) => f.name === 'events')!
  expect(events).toMatchObject({ widget: 'checklist', required: true, minItems: 1 })
  expect(events.options).toContain('story.published')
  expect(create.secret).toBe('secret')
  // The minimum role of each action is the route's own.
  expect(ADMIN_MANIFEST.plugins.actions.map((a) => [a.label, a.minRole, a.danger])).toContainEqual(['plugins.rotate', 'admin', true])
  expect(ADMIN_MANIFEST.plugins.log.filters[0]).toMatchObject({ param: 'outcome', options: ['allow', 'amend', 'veto', 'error'] })
  // Every catalog key the manifest names exists (the resource screen shows the key's text).
  const keys: string[] = []
  const walk = (v: unknown, key = '') => {
    if (typeof v === 'string' && ['title', 'intro', 'empty', 'label', 'help', 'on', 'off'].includes(key)) keys.push(v)
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, Array.isArray(v) ? key : k)
  }
  walk(ADMIN_MANIFEST)
  expect(keys.length).toBeGreaterThan(40)
  expect(keys.filter((k) => !(k in en))).toEqual([])
})
