import type { Config } from '../config'

/**
 * `content-service health`: asks the local server's readiness (or liveness) probe; true when it answers 200. For
 * container HEALTHCHECKs and scripts on images without curl.
 */
export async function runHealthCheck(config: Config, opts: { url?: string; live?: boolean } = {}): Promise<boolean> {
  const host = config.host === '0.0.0.0' || config.host === '::' || config.host === '' ? '127.0.0.1' : config.host
  const base = opts.url ?? `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`
  const url = `${base.replace(/\/+$/, '')}/v1/health/${opts.live ? 'live' : 'ready'}`
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) })
    const body = await res.text()
    if (res.status === 200) {
      console.log(`ok: ${url}`)
      return true
    }
    let message = body.trim()
    try {
      message = JSON.parse(body).message ?? message
    } catch {}
    console.error(`not ready (${res.status}): ${message}`)
    return false
  } catch (err) {
    console.error(`no answer from ${url}: ${(err as Error).message}`)
    return false
  }
}
