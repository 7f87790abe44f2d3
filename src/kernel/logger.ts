import type { Config } from '../config'

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const
type Level = Exclude<keyof typeof LEVELS, 'silent'>

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

/** One JSON object per line on stdout (errors on stderr). Never pass tokens or passwords in `fields`. */
export function createLogger(level: Config['logLevel'], write: (line: string, level: Level) => void = defaultWrite): Logger {
  const min = LEVELS[level]
  const log = (lvl: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }), lvl)
  }
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
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
