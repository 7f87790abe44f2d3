// Datasources: managing them (list, get, create, update, delete, rotate the push secret). The rest lives beside it,
// named for what it does, and is re-exported here so callers import the service from one place:
// settings.ts (config checks, masking, the view), sync.ts (pull, cron, housekeeping), push.ts (signed pushes),
// entries.ts (the entry set, stored and read).
import { asc, eq } from 'drizzle-orm'
import { datasources } from './tables'
import type { SpaceAccess } from '../../kernel/auth'
import { randomSecret } from '../../kernel/crypto'
import { KernelErrors, notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import type { CreateDatasourceInput, DatasourceView, DatasourceWithSecretView, UpdateDatasourceInput } from './model'
import { type CheckedConfig, checkConfig, fingerprint, requireDatasource, SECRET_CONTEXT, type StoredConfig, view } from './settings'
import { nextRunOf } from './sync'

export { entriesPage, listEntries } from './entries'
export { openSecret, PUSH_MAX_BYTES, PUSH_WINDOW_SECONDS, type PushInput, pushTarget, type SignedPush, storePush, verifyPush } from './push'
export { compileJsonPath, HEADERS_CONTEXT, maskUrl, type Row, SECRET_CONTEXT, URL_CONTEXT } from './settings'
export { claimDueDatasources, entriesFromMatches, nextRunOf, scheduleUnscheduled, maintainDatasources, PULL_MAX_BYTES, PULL_TIMEOUT_MS, syncByKey, syncDatasource } from './sync'

export async function listDatasources(kernel: Kernel, access: SpaceAccess): Promise<DatasourceView[]> {
  const rows = await kernel.db.db.select().from(datasources).where(eq(datasources.spaceId, access.space.id)).orderBy(asc(datasources.key))
  return rows.map(view)
}

export async function getDatasource(kernel: Kernel, access: SpaceAccess, key: string): Promise<DatasourceView> {
  return view(await requireDatasource(kernel, access.space.id, key))
}

export async function createDatasource(kernel: Kernel, access: SpaceAccess, input: CreateDatasourceInput): Promise<DatasourceWithSecretView> {
  const checked = await checkConfig(kernel, input.type, input.config, null)
  const now = kernel.clock.now()
  try {
    const row = await transact(kernel, async (tx, emit) => {
      const [row] = await tx
        .insert(datasources)
        .values({
          spaceId: access.space.id,
          key: input.key,
          label: input.label,
          type: input.type,
          config: checked.config,
          urlSealed: checked.urlSealed ?? null,
          headersSealed: checked.headersSealed ?? null,
          secretSealed: checked.secret ? kernel.secrets.seal(checked.secret.plain, SECRET_CONTEXT) : null,
          secretFingerprint: checked.secret ? fingerprint(checked.secret.plain) : null,
          status: 'never_synced',
          revision: 0,
          entryCount: 0,
          nextRunAt: input.type === 'http_json' ? nextRunOf(checked.config.cron, now) : null,
          createdAt: now,
          updatedAt: now,
        })
        .returning()
      emit({ type: 'datasource.changed', spaceId: access.space.id, payload: { key: row.key, id: row.id, revision: row.revision } })
      return row
    })
    const out: DatasourceWithSecretView = view(row)
    if (checked.secret?.generated) out.webhook_secret = checked.secret.plain
    return out
  } catch (err) {
    return uniqueAs('datasources_space_key_key', () => KernelErrors.conflict(`A datasource with the key "${input.key}" exists in this Space.`))(err)
  }
}

export async function updateDatasource(
  kernel: Kernel,
  access: SpaceAccess,
  key: string,
  input: UpdateDatasourceInput,
): Promise<DatasourceWithSecretView> {
  const current = await requireDatasource(kernel, access.space.id, key)
  if (input.type !== undefined && input.type !== current.type) {
    throw validationFailed({ type: ['cannot change after creation (delete the datasource and create a new one)'] })
  }
  const patch: Partial<typeof datasources.$inferInsert> = { updatedAt: kernel.clock.now() }
  if (input.label !== undefined) patch.label = input.label
  let secret: CheckedConfig['secret']
  if (input.config !== undefined) {
    const checked = await checkConfig(kernel, current.type, input.config, current)
    patch.config = checked.config
    // A new cron moves the schedule to its next tick from now; the same cron keeps the tick already set.
    const cron = checked.config.cron
    if (current.type === 'http_json' && (cron !== (current.config as StoredConfig).cron || !current.nextRunAt)) patch.nextRunAt = nextRunOf(cron, patch.updatedAt!)
    if (checked.urlSealed !== undefined) patch.urlSealed = checked.urlSealed
    if (checked.headersSealed !== undefined) patch.headersSealed = checked.headersSealed
    if (checked.secret) {
      secret = checked.secret
      patch.secretSealed = kernel.secrets.seal(checked.secret.plain, SECRET_CONTEXT)
      patch.secretFingerprint = fingerprint(checked.secret.plain)
    }
  }
  const row = await transact(kernel, async (tx, emit) => {
    const [row] = await tx.update(datasources).set(patch).where(eq(datasources.id, current.id)).returning()
    if (row) emit({ type: 'datasource.changed', spaceId: access.space.id, payload: { key: row.key, id: row.id, revision: row.revision } })
    return row
  })
  if (!row) throw notFound('Datasource')
  const out: DatasourceWithSecretView = view(row)
  if (secret?.generated) out.webhook_secret = secret.plain
  return out
}

export async function deleteDatasource(kernel: Kernel, access: SpaceAccess, key: string): Promise<void> {
  const current = await requireDatasource(kernel, access.space.id, key)
  await transact(kernel, async (tx, emit) => {
    await tx.delete(datasources).where(eq(datasources.id, current.id))
    emit({ type: 'datasource.changed', spaceId: access.space.id, payload: { key: current.key, id: current.id, revision: null } })
  })
}

/** webhook_push: a new generated secret, shown this once; pushes signed with the old one fail from now on. */
export async function rotateSecret(kernel: Kernel, access: SpaceAccess, key: string): Promise<DatasourceWithSecretView> {
  const current = await requireDatasource(kernel, access.space.id, key)
  if (current.type !== 'webhook_push') throw validationFailed({ type: ['only webhook_push datasources have a signing secret'] })
  const secret = randomSecret('dssec_')
  const [row] = await kernel.db.db
    .update(datasources)
    .set({ secretSealed: kernel.secrets.seal(secret, SECRET_CONTEXT), secretFingerprint: fingerprint(secret), updatedAt: kernel.clock.now() })
    .where(eq(datasources.id, current.id))
    .returning()
  if (!row) throw notFound('Datasource')
  return { ...view(row), webhook_secret: secret }
}
