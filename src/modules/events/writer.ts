import type { Tx } from '../../kernel/db'
import { type Emit, type NewEvent, transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { registerGroupInTx, registerInTx, type RegistrationJob, type RegistrationOutcome as Outcome, type RegistrationResult } from './service'

export type { RegistrationJob, RegistrationResult }

const MAX_BATCH = 128

/**
 * Writes registrations with group commit, as the forms' SubmissionWriter does: registrations arriving while a batch
 * is being written go together in the next transaction, so a busy server pays one commit (and its fsync) per batch
 * instead of one per registration; alone, a registration waits for nothing. A batch is written per event with a
 * handful of statements (service.registerGroupInTx: the spots taken by one conditional update under the event row's
 * lock, given in arrival order). If that fails as a whole (an address registered at the same moment through another
 * instance), the batch is written again with one savepoint per registration (service.registerInTx): a duplicate or a
 * full event then fails only its own request, and events a registration emitted are kept only when its savepoint
 * committed.
 */
export class RegistrationWriter {
  private queue: { job: RegistrationJob; resolve: (r: RegistrationResult) => void; reject: (e: unknown) => void }[] = []
  private running = false

  constructor(private kernel: Kernel) {}

  write(job: RegistrationJob): Promise<RegistrationResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject })
      // setImmediate: let the other requests already read from their sockets join this batch.
      if (!this.running && this.queue.length === 1) setImmediate(() => void this.flush())
    })
  }

  private async flush() {
    if (this.running) return
    this.running = true
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, MAX_BATCH)
        let outcomes: Outcome[]
        try {
          outcomes = await this.grouped(batch.map((b) => b.job))
        } catch {
          // The batch failed as a whole (a race with another instance, a bad row): each registration again, alone.
          outcomes = []
          try {
            await transact(this.kernel, async (tx, emit) => {
              for (const { job } of batch) outcomes.push(await this.one(tx, emit, job))
            })
          } catch (err) {
            for (const b of batch) b.reject(err)
            continue
          }
        }
        batch.forEach((b, i) => {
          const o = outcomes[i]
          if (o.ok) b.resolve(o.value)
          else b.reject(o.error)
        })
      }
    } finally {
      this.running = false
    }
  }

  /** The batch by event, in arrival order within each event, in one transaction (registerGroupInTx per event). */
  private grouped(jobs: RegistrationJob[]): Promise<Outcome[]> {
    const groups = new Map<number, number[]>()
    jobs.forEach((j, i) => {
      const g = groups.get(j.event.id)
      if (g) g.push(i)
      else groups.set(j.event.id, [i])
    })
    return transact(this.kernel, async (tx, emit) => {
      const outcomes: Outcome[] = new Array(jobs.length)
      for (const idx of groups.values()) {
        const res = await registerGroupInTx(this.kernel, tx, emit, idx.map((i) => jobs[i]))
        idx.forEach((i, k) => (outcomes[i] = res[k]))
      }
      return outcomes
    })
  }

  private async one(tx: Tx, emit: Emit, job: RegistrationJob): Promise<Outcome> {
    const pending: NewEvent[] = []
    try {
      const value = await tx.transaction((sp) =>
        registerInTx(this.kernel, sp as Tx, ((e: NewEvent) => void pending.push(e)) as Emit, job.space, job.event, job.input, job.base),
      )
      for (const e of pending) emit(e)
      return { ok: true, value }
    } catch (error) {
      return { ok: false, error }
    }
  }
}
