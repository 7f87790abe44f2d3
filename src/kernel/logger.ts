import type { Config } from '../config'

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const
type Level = Exclude<keyof typeof LEVELS, 'silent'>

export interface RequestLine {
  method: string
  route: string
  status: number
  ms: number
  requestId: string
  ip: string
}

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
  /** Whether `request` lines are written (LOG_LEVEL info or debug): callers skip gathering them otherwise. */
  readonly logsRequests: boolean
  /** The one line per request, at info: `{"time","level":"info","msg":"request",method,route,status,ms,request_id,ip}`. */
  request(line: RequestLine): void
}

let stampMs = 0
let stamp = ''
/** The ISO time, formatted once per millisecond. */
function now(): string {
  const ms = Date.now()
  if (ms !== stampMs) {
    stampMs = ms
    stamp = new Date(ms).toISOString()
  }
  return stamp
}

/** One JSON object per line on stdout (errors on stderr). Never pass tokens or passwords in `fields`. */
export function createLogger(level: Config['logLevel'], write: (line: string, level: Level) => void = defaultWrite): Logger {
  const min = LEVELS[level]
  const log = (lvl: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return
    write(JSON.stringify({ time: now(), level: lvl, msg, ...fields }), lvl)
  }
  const logsRequests = LEVELS.info >= min
  return {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    logsRequests,
    request(r) {
      if (!logsRequests) return
      // A template string: the route is the only value that can hold characters JSON must escape.
      write(
        `{"time":"${now()}","level":"info","msg":"request","method":"${r.method}","route":${JSON.stringify(r.route)},` +
          `"status":${r.status},"ms":${r.ms},"request_id":"${r.requestId}","ip":"${r.ip}"}`,
        'info',
      )
    },
  }
}

// Lines are gathered and written once per event-loop turn: one write per request would cost more than the request.
let pending = ''
let scheduled = false
function flush() {
  scheduled = false
  if (!pending) return
  const out = pending
  pending = ''
  process.stdout.write(out)
}

function defaultWrite(line: string, level: Level) {
  if (level === 'error') {
    flush()
    process.stderr.write(line + '\n')
    return
  }
  pending += line + '\n'
  if (pending.length > 65_536) flush()
  else if (!scheduled) {
    scheduled = true
    setImmediate(flush)
  }
}

/** Writes buffered log lines now (before exit). */
export const flushLogs = flush
