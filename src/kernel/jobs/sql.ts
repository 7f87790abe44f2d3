import type { SQL } from 'drizzle-orm'
import { type DbOrTx, rowsOf } from '../db'

/** The rows of one statement of the job tables. */
export async function query<T>(db: DbOrTx, q: SQL): Promise<T[]> {
  return rowsOf<T>(await db.execute(q))
}

export const iso = (d: Date) => d.toISOString()
