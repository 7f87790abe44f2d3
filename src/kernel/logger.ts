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

function defaultWrite(line: string, level: Level) {
  if (level === 'error') process.stderr.write(line + '\n')
  else process.stdout.write(line + '\n')
}
