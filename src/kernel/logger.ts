import { writeSync } from 'node:fs'
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
  /**
   * A line an operator must see whatever LOG_LEVEL says (only `silent` drops it): where the server listens. Written as
   * an info line.
   */
  notice(msg: string, fields?: Record<string, unknown>): void
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

const LABEL: Record<Level, string> = { debug: 'DEBUG', info: 'INFO ', warn: 'WARN ', error: 'ERROR' }

function prettyValue(v: unknown): string {
  if (typeof v !== 'string') return JSON.stringify(v) ?? String(v)
  return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)
}

/** `12:00:00.000 INFO  msg key=value ...`: for a person at a terminal (LOG_FORMAT=pretty). */
function prettyLine(lvl: Level, msg: string, fields?: Record<string, unknown>): string {
  let line = `${now().slice(11, 23)} ${LABEL[lvl]} ${msg}`
  if (fields) for (const [k, v] of Object.entries(fields)) if (v !== undefined) line += ` ${k}=${prettyValue(v)}`
  return line
}

/**
 * One JSON object per line on stdout (errors on stderr), or pretty lines (`format` 'pretty'). Never pass tokens or
 * passwords in `fields`.
 */
export function createLogger(
  level: Config['logLevel'],
  write: (line: string, level: Level) => void = defaultWrite,
  format: Config['logFormat'] = 'json',
): Logger {
  const min = LEVELS[level]
  const pretty = format === 'pretty'
  const line = (lvl: Level, msg: string, fields?: Record<string, unknown>) =>
    pretty ? prettyLine(lvl, msg, fields) : JSON.stringify({ time: now(), level: lvl, msg, ...fields })
  const log = (lvl: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return
    write(line(lvl, msg, fields), lvl)
  }
  const logsRequests = LEVELS.info >= min
  // The one line per request. JSON: a template string (the route is the only value that can hold characters JSON
  // must escape), not an object per request.
  const requestLine = pretty
    ? (r: RequestLine) => `${now().slice(11, 23)} ${LABEL.info} ${r.method} ${r.route} ${r.status} ${r.ms} ms ip=${r.ip} request_id=${r.requestId}`
    : (r: RequestLine) =>
        `{"time":"${now()}","level":"info","msg":"request","method":"${r.method}","route":${JSON.stringify(r.route)},` +
        `"status":${r.status},"ms":${r.ms},"request_id":"${r.requestId}","ip":"${r.ip}"}`
  return {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    notice(msg, fields) {
      if (level !== 'silent') write(line('info', msg, fields), 'info')
    },
    logsRequests,
    request(r) {
      if (logsRequests) write(requestLine(r), 'info')
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

/** Before exit: written synchronously, so no line is lost when the process ends right after. */
function flushSync() {
  scheduled = false
  if (!pending) return
  const out = pending
  pending = ''
  try {
    writeSync(1, out)
  } catch {
    process.stdout.write(out)
  }
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
export const flushLogs = flushSync
