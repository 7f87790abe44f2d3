// What the admin screens ask of a datasource besides its settings: a JSONPath tried against the last pull, the next
// runs of a cron expression, and the Stories whose drafts hold `$ds:<key>.` markers. service.ts re-exports them.
import { eq } from 'drizzle-orm'
import { datasourcePulls } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { validationFailed } from '../../kernel/errors'
import { parseCron } from '../../kernel/jobs'
import type { Kernel } from '../../kernel/kernel'
import { storiesContaining } from '../stories/service'
import { TEST_PATH_SAMPLE } from './model'
import { compileJsonPath, requireDatasource } from './settings'
import { entriesFromMatches } from './sync'

/** `POST …/test-path`: what `jsonPath` selects from the last pulled document (nothing stored, nothing fetched). */
export async function testJsonPath(kernel: Kernel, access: SpaceAccess, key: string, jsonPath: string) {
  const row = await requireDatasource(kernel, access.space.id, key)
  if (row.type !== 'http_json') throw validationFailed({ type: ['only http_json datasources pull a document'] })
  let path: ReturnType<typeof compileJsonPath>
  try {
    path = compileJsonPath(jsonPath)
  } catch (err) {
    throw validationFailed({ json_path: [`is not a valid JSONPath expression (RFC 9535): ${(err as Error).message}`.slice(0, 300)] })
  }
  const [pull] = await kernel.db.db.select().from(datasourcePulls).where(eq(datasourcePulls.datasourceId, row.id)).limit(1)
  if (!pull) return { pulled_at: null, matches: 0, entries: 0, sample: [] }
  const doc = (pull.document as { v: unknown }).v
  const values = path.query(doc as never).values()
  const entries = values.length ? entriesFromMatches(values) : []
  return { pulled_at: pull.pulledAt.toISOString(), matches: values.length, entries: entries.length, sample: entries.slice(0, TEST_PATH_SAMPLE) }
}

/** `POST …/cron-preview`: the next `count` runs of a five-field cron expression (UTC) after now; 422 when it does not parse. */
export function cronPreview(kernel: Kernel, cron: string, count = 5): { runs: string[] } {
  let parsed: ReturnType<typeof parseCron>
  try {
    parsed = parseCron(cron)
  } catch (err) {
    throw validationFailed({ cron: [`is not a valid five-field cron expression: ${(err as Error).message}`.slice(0, 300)] })
  }
  const runs: string[] = []
  let after = kernel.clock.now()
  for (let i = 0; i < count; i++) {
    const next = parsed.nextRun(after)
    if (!next) break
    runs.push(next.toISOString())
    after = next
  }
  return { runs }
}

/** `GET …/usage`: the Stories whose drafts (any locale) hold a `$ds:<key>.` marker. */
export async function datasourceUsage(kernel: Kernel, access: SpaceAccess, key: string) {
  await requireDatasource(kernel, access.space.id, key)
  return storiesContaining(kernel, access.space.id, `$ds:${key}.`)
}
