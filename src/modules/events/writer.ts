import type { Tx } from '../../kernel/db'
import { type Emit, transact } from '../../kernel/events'
import { failed, GroupCommit } from '../../kernel/group-commit'
import type { Kernel } from '../../kernel/kernel'
import { registerGroupInTx, registerInTx, type RegistrationJob, type RegistrationResult } from './service'

export type { RegistrationJob, RegistrationResult }

const MAX_BATCH = 128

interface Ctx {
  tx: Tx
  emit: Emit
}

/**
 * Writes registrations with group commit (kernel/group-commit.ts), as the forms' SubmissionWriter does: registrations
 * arriving while a batch is being written go together in the next transaction, so a busy server pays one commit (and
 * its fsync) per batch instead of one per registration; alone, a registration waits for nothing. A batch is written per
 * event with a handful of statements (service.registerGroupInTx: the spots taken by one conditional update under the
 * event row's lock, given in arrival order); a duplicate or a full event fails only its own request. If the batch fails
 * as a whole (an address registered at the same moment through another instance), each registration is written again
 * alone in its own transaction (service.registerInTx), and the events a registration emitted are kept only when its
 * transaction committed.
 */
export class RegistrationWriter {
  private readonly gc: GroupCommit<RegistrationJob, RegistrationResult, Ctx>

  constructor(private kernel: Kernel) {
    this.gc = new GroupCommit<RegistrationJob, RegistrationResult, Ctx>({
      maxBatch: MAX_BATCH,
      transaction: (fn) => transact(kernel, (tx, emit) => fn({ tx, emit })),
      batch: (ctx, jobs) => this.grouped(ctx, jobs),
      single: (ctx, job) => registerInTx(kernel, ctx.tx, ctx.emit, job.space, job.event, job.input, job.base),
    })
  }

  write(job: RegistrationJob): Promise<RegistrationResult> {
    return this.gc.submit(job)
  }

  /** The batch by event, in arrival order within each event (registerGroupInTx per event). */
  private async grouped({ tx, emit }: Ctx, jobs: RegistrationJob[]) {
    const groups = new Map<number, number[]>()
    jobs.forEach((j, i) => {
      const g = groups.get(j.event.id)
      if (g) g.push(i)
      else groups.set(j.event.id, [i])
    })
    const out: (RegistrationResult | ReturnType<typeof failed>)[] = new Array(jobs.length)
    for (const idx of groups.values()) {
      const res = await registerGroupInTx(this.kernel, tx, emit, idx.map((i) => jobs[i]))
      idx.forEach((i, k) => {
        const o = res[k]
        out[i] = o.ok ? o.value : failed(o.error)
      })
    }
    return out
  }
}
