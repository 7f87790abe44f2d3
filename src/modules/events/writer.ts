import type { Tx } from '../../kernel/db'
import { type Emit, type NewEvent, transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { type EventRow, type NewRegistration, registerInTx, type SpaceRefLite } from './service'

export interface RegistrationJob {
  space: SpaceRefLite
  event: EventRow
  input: NewRegistration
  base: string
}

export type RegistrationResult = { id: string; status: 'confirmed' | 'waitlisted'; ics_url: string }

type Outcome = { ok: true; value: RegistrationResult } | { ok: false; error: unknown }

const MAX_BATCH = 128

/**
 * Writes registrations with group commit, as the forms' SubmissionWriter does: registrations arriving while a batch
 * is being written go together in the next transaction, so a busy server pays one commit (and its fsync) per batch
 * instead of one per registration; alone, a registration waits for nothing. Each registration runs in its own
 * savepoint, in arrival order: a duplicate or a full event fails only its own request, and every registration sees
 * the spots the earlier ones took (the capacity rule is unchanged: one conditional update of the event row each).
 * Events a registration emitted are kept only when its savepoint committed.
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
        const outcomes: Outcome[] = []
        try {
          await transact(this.kernel, async (tx, emit) => {
            for (const { job } of batch) outcomes.push(await this.one(tx, emit, job))
          })
        } catch (err) {
          for (const b of batch) b.reject(err)
          continue
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
