import type { Database, Tx } from './db'

/** What a batch function answers for an item that fails alone (the others of its batch still commit). */
export interface ItemFailure {
  readonly [FAILED]: true
  readonly error: unknown
}
const FAILED = Symbol('group-commit.failed')

/** Marks one item of a batch as failed with `error`: its caller's promise rejects with it, the batch still commits. */
export function failed(error: unknown): ItemFailure {
  return { [FAILED]: true, error }
}

export function isFailure(v: unknown): v is ItemFailure {
  return typeof v === 'object' && v !== null && (v as Partial<ItemFailure>)[FAILED] === true
}

/**
 * Runs `fn` in a savepoint of `tx`: its value, or failed(error) when it threw (the savepoint is rolled back, `tx` stays
 * usable). For batch functions that write item by item and want one bad item to fail alone.
 */
export async function inSavepoint<R>(tx: Tx, fn: (sp: Tx) => Promise<R>): Promise<R | ItemFailure> {
  try {
    return await tx.transaction((sp) => fn(sp as Tx))
  } catch (error) {
    return failed(error)
  }
}

export interface GroupCommitOptions<I, R, C = Tx> {
  /**
   * Writes one batch inside its transaction: one answer per item, in the items' order — a value, or failed(error) for
   * an item that fails alone. Throwing fails the batch as a whole (then see `single`).
   */
  batch: (ctx: C, items: I[]) => Promise<(R | ItemFailure)[]>
  /**
   * Opens the transaction of a batch and hands its context to `fn` (default: a plain transaction of `db`, the context
   * being its Tx). For a context with more than the Tx (kernel/events.ts transact's emit, for example).
   */
  transaction?: <X>(fn: (ctx: C) => Promise<X>) => Promise<X>
  /** The database of the default `transaction`. */
  db?: Database
  /**
   * When a batch of several items throws as a whole, each item is written again alone, each in its own transaction,
   * with this function (default: `batch` with that one item), so a bad item fails only its own caller.
   */
  single?: (ctx: C, item: I) => Promise<R | ItemFailure>
  /** Items per transaction at most (default 256). */
  maxBatch?: number
}

/**
 * Group commit: concurrent writes share one transaction (and one commit, one fsync). The first item starts a batch at
 * once — in this turn of the event loop (setImmediate), no timer: alone, an item waits for nothing; items that arrive
 * while a batch commits form the next batch (at most `maxBatch` items each), so under load the database sees one
 * transaction per batch instead of one per item. Each item's promise settles on its own: with its value, or with its
 * error when the batch function answered failed(error) for it. Batches run one after the other (on PGlite the one
 * connection is shared anyway; on Postgres one connection per writer keeps the lock order simple).
 *
 * A batch function that throws fails the whole batch; its items are then written again one by one (see `single`).
 */
export class GroupCommit<I, R, C = Tx> {
  private queue: { item: I; resolve: (r: R) => void; reject: (e: unknown) => void }[] = []
  private running = false
  private readonly maxBatch: number
  private readonly tx: <X>(fn: (ctx: C) => Promise<X>) => Promise<X>

  constructor(private readonly opts: GroupCommitOptions<I, R, C>) {
    this.maxBatch = Math.max(1, opts.maxBatch ?? 256)
    if (opts.transaction) this.tx = opts.transaction
    else {
      const db = opts.db
      if (!db) throw new Error('GroupCommit: give db or transaction')
      this.tx = <X>(fn: (ctx: C) => Promise<X>) => db.db.transaction((tx) => fn(tx as unknown as C))
    }
  }

  /** Items waiting for a batch (not counting the one being written). */
  get pending(): number {
    return this.queue.length
  }

  /** Writes `item` with the next batch; resolves with its result, rejects with its own error. */
  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject })
      if (this.running) return
      this.running = true
      // setImmediate, not a timer: the batch starts in this turn of the event loop, once the requests already read
      // from their sockets (and items submitted in the same tick) have joined it; an idle item waits for nothing else.
      setImmediate(() => void this.drain())
    })
  }

  private async drain() {
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, this.maxBatch)
        let answers: (R | ItemFailure)[]
        try {
          answers = await this.tx((ctx) => this.opts.batch(ctx, batch.map((b) => b.item)))
          if (!Array.isArray(answers) || answers.length !== batch.length) {
            throw new Error(`GroupCommit: the batch function answered ${Array.isArray(answers) ? answers.length : 'no'} results for ${batch.length} items`)
          }
        } catch (err) {
          if (batch.length === 1) {
            batch[0].reject(err)
            continue
          }
          // The batch failed as a whole: each item again, alone, so one bad item fails only its own caller.
          for (const b of batch) {
            try {
              settle(b, await this.tx((ctx) => this.one(ctx, b.item)))
            } catch (e) {
              b.reject(e)
            }
          }
          continue
        }
        batch.forEach((b, i) => settle(b, answers[i]))
      }
    } finally {
      this.running = false
    }
  }

  private async one(ctx: C, item: I): Promise<R | ItemFailure> {
    if (this.opts.single) return this.opts.single(ctx, item)
    const r = await this.opts.batch(ctx, [item])
    if (!Array.isArray(r) || r.length !== 1) throw new Error('GroupCommit: the batch function answered no result for its item')
    return r[0]
  }
}

function settle<R>(b: { resolve: (r: R) => void; reject: (e: unknown) => void }, answer: R | ItemFailure) {
  if (isFailure(answer)) b.reject(answer.error)
  else b.resolve(answer)
}
