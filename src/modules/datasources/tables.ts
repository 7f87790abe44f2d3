import { sql } from 'drizzle-orm'
import { index, integer, json, jsonb, pgTable, primaryKey, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { spaces } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * A Space's datasource (spec 2, 4.13). `config` holds the non-secret settings (http_json: the URL with its user-info
 * and query values masked, json_path, cron, header names; webhook_push: allow_unsigned, schema); the whole URL, header
 * values and the push secret are stored sealed (AES-256-GCM), never plain. `revision` grows by one with every successful sync or push that changed the data;
 * `data_hash` (SHA-256 of the entries' JSON) tells whether it did.
 */
export const datasources = pgTable(
  'datasources',
  {
    id: serial('id').primaryKey(),
    spaceId: integer('space_id')
      .notNull()
      .references(() => spaces.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    label: text('label').notNull(),
    type: text('type', { enum: ['http_json', 'webhook_push'] }).notNull(),
    config: jsonb('config').notNull(),
    /** http_json: the whole URL (an API key may be in its user-info or query), sealed. */
    urlSealed: text('url_sealed'),
    /** http_json: the header map as sealed JSON. */
    headersSealed: text('headers_sealed'),
    /** webhook_push: the signing secret, sealed. */
    secretSealed: text('secret_sealed'),
    secretFingerprint: text('secret_fingerprint'),
    status: text('status', { enum: ['ok', 'error', 'never_synced'] }).notNull(),
    revision: integer('revision').notNull(),
    entryCount: integer('entry_count').notNull(),
    dataHash: text('data_hash'),
    lastSyncedAt: ts('last_synced_at'),
    lastError: text('last_error'),
    /**
     * http_json: when its cron next fires (the scheduler pulls it once this has passed, then moves it on); null for a
     * webhook_push datasource, and for an http_json one until the minute tick computes it (rows stored before the
     * column existed).
     */
    nextRunAt: ts('next_run_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('datasources_space_key_key').on(t.spaceId, t.key),
    index('datasources_type_idx').on(t.type),
    // The minute tick's query: the due datasources, soonest first. Only scheduled rows are in it.
    index('datasources_next_run_at_idx').on(t.nextRunAt).where(sql`next_run_at IS NOT NULL`),
    // The tick's backfill: http_json rows not yet given a next_run_at (normally none, so the index stays empty).
    index('datasources_unscheduled_idx').on(t.id).where(sql`type = 'http_json' AND next_run_at IS NULL`),
  ],
)

/**
 * The entry set of a datasource: one row holding the whole array, replaced in one statement by a sync or a push (so
 * a reader never sees half a set), together with the datasource's revision in the same transaction.
 */
export const datasourceEntrySets = pgTable('datasource_entry_sets', {
  datasourceId: integer('datasource_id')
    .primaryKey()
    .references(() => datasources.id, { onDelete: 'cascade' }),
  /** `json`, not `jsonb`: entries keep their fields in the order they were sent or pulled. */
  entries: json('entries').notNull(),
})

/**
 * Signatures of accepted signed pushes, kept for the timestamp window (300 s either way) and pruned after it: the same
 * signed push sent again inside the window (a replay that would roll the data back) is refused. In the database, so
 * the refusal holds across instances.
 */
export const datasourcePushSignatures = pgTable(
  'datasource_push_signatures',
  {
    datasourceId: integer('datasource_id')
      .notNull()
      .references(() => datasources.id, { onDelete: 'cascade' }),
    /** The signature's hex digest (an HMAC: it says nothing about the secret). */
    signature: text('signature').notNull(),
    /** When it may be forgotten: the push's timestamp plus the window. */
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.datasourceId, t.signature] }), index('datasource_push_signatures_expires_idx').on(t.expiresAt)],
)

/**
 * The last document an http_json pull received (parsed JSON, before its JSONPath), one row per datasource, replaced by
 * every pull that got JSON back — also by one whose JSONPath then matched nothing, which is when an editor most needs
 * to try another path against it (`POST …/test-path`). Entries already come from it, so it holds nothing more secret.
 */
export const datasourcePulls = pgTable('datasource_pulls', {
  datasourceId: integer('datasource_id')
    .primaryKey()
    .references(() => datasources.id, { onDelete: 'cascade' }),
  /** `{v: <the parsed body>}` (the body may be any JSON value, null included). */
  document: json('document').notNull(),
  pulledAt: ts('pulled_at').notNull(),
})
