/** The types of a migration file (`import type { Migration } from '@content-service/cli/migrate'`). */

/** A block as stored: its blueprint's name, its id, its fields. */
export interface Block {
  component: string
  _uid: string
  [field: string]: unknown
}

export interface MigrationContext {
  story: { uuid: string; full_path: string; name: string }
  lang: string
}

/** What a migration file exports by default. */
export interface Migration {
  /** The blueprint whose blocks are migrated. */
  component: string
  /** The block as it should be; `null` removes it; returning it unchanged (or an equal block) changes nothing. */
  migrate(block: Block, context: MigrationContext): Block | null | Promise<Block | null>
}
