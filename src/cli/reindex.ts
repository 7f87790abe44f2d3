import type { Config } from '../config'
import { type Database, openDatabase } from '../kernel/db'
import { databaseOptions } from '../kernel/kernel'
import { createLogger } from '../kernel/logger'
import { SEARCH_CHANNEL, type SearchWire } from '../modules/search/registry'
import { findLiveSpace } from '../modules/spaces/service'

// `content-service reindex [--space <slug>]`: every running instance rebuilds its search indexes in full from the
// database. The indexes live in the instances' memory, so the command does not build anything itself: it asks them
// over Postgres NOTIFY, shows each one's progress, and returns when all that answered have finished.

export interface ReindexOptions {
  /** Rebuild only this Space (slug); every Space otherwise. */
  space?: string
}

export interface ReindexRuntime {
  /** An open database (tests); otherwise opened from config and closed afterwards. */
  database?: Database
  /** Where progress lines go (default: stdout). */
  print?: (line: string) => void
  /** How long to collect the instances' answers before concluding none is running (default 3 s). */
  ackMs?: number
  /** How long to wait for the rebuilds (default: SEARCH_REINDEX_TIMEOUT_SECONDS). */
  timeoutMs?: number
}

export interface InstanceReport {
  instance: string
  status: 'done' | 'failed' | 'timed_out'
  spaces?: number
  documents?: number
  ms?: number
  error?: string
}

export interface ReindexReport {
  request: string
  space: string | null
  instances: InstanceReport[]
}

export class ReindexError extends Error {}

const short = (id: string) => id.slice(0, 8)

export async function runReindex(config: Config, opts: ReindexOptions = {}, rt: ReindexRuntime = {}): Promise<ReindexReport> {
  const logger = rt.print ? null : createLogger(config.logLevel, undefined, config.logFormat)
  const print = rt.print ?? ((line: string) => logger!.info(line))
  if (!rt.database && !config.databaseUrl) {
    throw new ReindexError(
      'reindex reaches the running instances through Postgres LISTEN/NOTIFY and needs DATABASE_URL. With the embedded ' +
        'database the server is the only instance and holds the database open: restart it — start-up builds every index.',
    )
  }
  const database = rt.database ?? (await openDatabase(databaseOptions(config, logger ?? createLogger(config.logLevel, undefined, config.logFormat))))
  const request = crypto.randomUUID()
  const t0 = performance.now()
  let unlisten: (() => Promise<void>) | null = null
  try {
    let spaceId: number | null = null
    if (opts.space !== undefined) {
      // The command has no kernel around it: findLiveSpace needs only the database.
      const space = await findLiveSpace({ db: database }, opts.space)
      if (!space) throw new ReindexError(`no live Space with the slug "${opts.space}"`)
      spaceId = space.id
    }
    const answers = new Map<string, InstanceReport | null>()
    const lastShown = new Map<string, number>()
    let settle: () => void = () => {}
    const allDone = () => answers.size > 0 && [...answers.values()].every((a) => a !== null)
    unlisten = await database.listen(SEARCH_CHANNEL, (payload) => {
      let msg: SearchWire
      try {
        msg = JSON.parse(payload)
      } catch {
        return
      }
      if (!('r' in msg) || msg.r !== request || msg.t === 'reindex') return
      const id = msg.i
      switch (msg.t) {
        case 'reindex.ack':
          if (!answers.has(id)) {
            answers.set(id, null)
            print(`  instance ${short(id)}: rebuilding`)
          }
          break
        case 'reindex.progress': {
          if (!answers.has(id)) answers.set(id, null)
          const now = performance.now()
          if (now - (lastShown.get(id) ?? 0) >= 1000 || msg.done === msg.total) {
            lastShown.set(id, now)
            const pct = msg.total ? Math.floor((msg.done / msg.total) * 100) : 100
            print(`  instance ${short(id)}: ${msg.done}/${msg.total} Stories (${pct}%)`)
          }
          break
        }
        case 'reindex.done':
          answers.set(id, { instance: id, status: 'done', spaces: msg.spaces, documents: msg.documents, ms: msg.ms })
          print(`  instance ${short(id)}: done — ${msg.spaces} Space(s), ${msg.documents} documents in ${(msg.ms / 1000).toFixed(1)} s`)
          break
        case 'reindex.failed':
          answers.set(id, { instance: id, status: 'failed', error: msg.error })
          print(`  instance ${short(id)}: FAILED — ${msg.error}`)
          break
        default:
          return
      }
      if (allDone()) settle()
    })
    print(`reindex ${short(request)}: asking every running instance to rebuild ${opts.space ? `Space "${opts.space}"` : 'every Space'}`)
    await database.notify(SEARCH_CHANNEL, JSON.stringify({ t: 'reindex', r: request, s: spaceId } satisfies SearchWire))

    const ackMs = rt.ackMs ?? 3000
    const timeoutMs = rt.timeoutMs ?? config.searchReindexTimeoutSeconds * 1000
    const finished = new Promise<void>((resolve) => {
      settle = resolve
    })
    const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.())
    // Answers come within milliseconds from live instances; wait the whole window so slower ones are counted too.
    await sleep(ackMs)
    if (answers.size === 0) {
      print('no running instance answered: nothing was rebuilt (every instance builds its indexes when it starts)')
      return { request, space: opts.space ?? null, instances: [] }
    }
    if (!allDone()) await Promise.race([finished, sleep(Math.max(0, timeoutMs - ackMs))])
    const instances = [...answers.entries()].map(([id, a]) => a ?? { instance: id, status: 'timed_out' as const })
    for (const a of instances) if (a.status === 'timed_out') print(`  instance ${short(a.instance)}: no answer within ${Math.round(timeoutMs / 1000)} s`)
    const ok = instances.filter((a) => a.status === 'done').length
    const seconds = ((performance.now() - t0) / 1000).toFixed(1)
    print(`${ok} of ${instances.length} instance(s) rebuilt in ${seconds} s`)
    const report = { request, space: opts.space ?? null, instances }
    if (ok < instances.length) throw Object.assign(new ReindexError(`${instances.length - ok} instance(s) did not finish the rebuild`), { report })
    return report
  } finally {
    if (unlisten) await unlisten().catch(() => {})
    if (!rt.database) await database.close()
  }
}
