import { isIP } from 'node:net'
import type { Config } from '../../config'
import { type OutboundError, resolveTarget } from '../../kernel/outbound'
import { AiErrors } from './model'

/**
 * The one client of the AI provider: any OpenAI-compatible chat-completions API (hosted, or a local Ollama or
 * llama.cpp server). Calls go through the kernel's outbound guard (`resolveTarget`: the host is resolved once and
 * the request connects to exactly that address, no redirects); the operator's own AI_BASE_URL is trusted as
 * configured, so a model on a private address works without SERVICE_OUTBOUND_ALLOW_PRIVATE (which would open
 * webhooks and datasources to private targets too). Prompts and the API key are never logged: errors carry the
 * provider's status and its own error message only.
 */

export type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string | ContentPart[]
}
export interface Usage {
  prompt_tokens: number
  completion_tokens: number
}
export interface ChatRequest {
  messages: ChatMessage[]
  /** Default: AI_MODEL. */
  model?: string
  maxTokens?: number
  temperature?: number
}

export const NO_USAGE: Usage = { prompt_tokens: 0, completion_tokens: 0 }

function usageOf(raw: unknown): Usage {
  const u = raw as { prompt_tokens?: unknown; completion_tokens?: unknown } | null | undefined
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0)
  return { prompt_tokens: n(u?.prompt_tokens), completion_tokens: n(u?.completion_tokens) }
}

/** The provider's own error message, if it sent one (never our prompt): `{error: {message}}` or `{error: "..."}`. */
function providerMessage(body: string): string {
  try {
    const j = JSON.parse(body) as { error?: { message?: unknown } | string }
    const m = typeof j.error === 'string' ? j.error : j.error?.message
    if (typeof m === 'string') return m.slice(0, 300)
  } catch {}
  return body.slice(0, 200)
}

type Cfg = Pick<Config, 'aiBaseUrl' | 'aiApiKey' | 'aiModel' | 'aiVisionModel' | 'aiTimeoutMs' | 'aiRetryDelaysMs'>

/** A deadline that moves: each sign of progress (`touch`) gives the call another `ms`. */
class IdleDeadline {
  readonly controller = new AbortController()
  private timer: ReturnType<typeof setTimeout> | null = null
  timedOut = false
  constructor(
    private ms: number,
    outer?: AbortSignal,
  ) {
    if (outer) {
      if (outer.aborted) this.controller.abort(outer.reason)
      else outer.addEventListener('abort', () => this.controller.abort(outer.reason), { once: true })
    }
    this.touch()
  }
  touch() {
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timedOut = true
      this.controller.abort(new Error('timeout'))
    }, this.ms)
  }
  clear() {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }
  get signal() {
    return this.controller.signal
  }
}

export class AiProvider {
  constructor(private config: Cfg) {}

  get enabled(): boolean {
    return !!(this.config.aiBaseUrl && this.config.aiModel)
  }
  get model(): string | null {
    return this.enabled ? this.config.aiModel : null
  }
  get visionModel(): string | null {
    return this.enabled ? this.config.aiVisionModel : null
  }

  /** 503 ai_unavailable unless configured. */
  requireEnabled(vision = false) {
    if (!this.enabled) {
      throw AiErrors.unavailable(
        'AI is not configured on this server. To enable it, set AI_BASE_URL (an OpenAI-compatible API, e.g. https://api.openai.com/v1 or a local Ollama at http://127.0.0.1:11434/v1) and AI_MODEL, and AI_API_KEY when the provider needs one.',
      )
    }
    if (vision && !this.config.aiVisionModel) {
      throw AiErrors.unavailable('Image descriptions need a vision model: set AI_VISION_MODEL (e.g. gpt-4o-mini, or llava on Ollama).')
    }
  }

  /**
   * Sends the request and returns the response once its status is known: retried (at most twice, with backoff) on
   * 429 and 5xx; any other non-2xx and the last failed attempt become AppErrors. The deadline stays the caller's:
   * it is touched on every chunk read.
   */
  private async open(body: Record<string, unknown>, deadline: IdleDeadline): Promise<Response> {
    const url = `${this.config.aiBaseUrl}/chat/completions`
    const payload = JSON.stringify(body)
    const delays = this.config.aiRetryDelaysMs.slice(0, 2)
    for (let attempt = 0; ; attempt++) {
      let res: Response
      try {
        res = await this.fetchPinned(url, payload, deadline.signal)
      } catch (err) {
        if (deadline.timedOut) throw AiErrors.timeout(`The AI provider did not answer within ${this.config.aiTimeoutMs / 1000} s.`)
        if (deadline.signal.aborted) throw err
        const kind = (err as OutboundError).kind
        throw AiErrors.providerError(
          kind === 'dns_failed' || kind === 'invalid_url' || kind === 'blocked_address' ? `AI_BASE_URL cannot be reached: ${(err as Error).message}` : 'The AI provider cannot be reached.',
        )
      }
      if (res.ok) return res
      const text = await res.text().catch(() => '')
      const retryable = res.status === 429 || res.status >= 500
      if (retryable && attempt < delays.length) {
        await sleep(delays[attempt], deadline.signal).catch(() => {})
        if (deadline.timedOut) throw AiErrors.timeout(`The AI provider did not answer within ${this.config.aiTimeoutMs / 1000} s.`)
        if (deadline.signal.aborted) throw deadline.signal.reason
        deadline.touch()
        continue
      }
      const message = `The AI provider answered ${res.status}: ${providerMessage(text)}`
      if (res.status === 429) {
        const after = res.headers.get('retry-after')
        throw AiErrors.providerRateLimited(message, undefined, after && /^\d{1,6}$/.test(after) ? { 'Retry-After': after } : undefined)
      }
      throw AiErrors.providerError(message)
    }
  }

  private async fetchPinned(url: string, body: string, signal: AbortSignal): Promise<Response> {
    // Trusted as configured (allowPrivate), but still resolved once and pinned like every outbound call.
    const target = await resolveTarget(url, { allowPrivate: true }, signal)
    const host = target.url.hostname.startsWith('[') ? target.url.hostname.slice(1, -1) : target.url.hostname
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'User-Agent': 'content-service-ai', Host: target.url.host }
    if (this.config.aiApiKey) headers.Authorization = `Bearer ${this.config.aiApiKey}`
    let last: unknown = null
    for (const candidate of target.addresses) {
      const pinned = new URL(target.url.href)
      pinned.hostname = candidate.family === 6 ? `[${candidate.address}]` : candidate.address
      try {
        return await fetch(pinned, {
          method: 'POST',
          headers,
          body,
          redirect: 'manual',
          signal,
          proxy: false,
          ...(target.url.protocol === 'https:' && !isIP(host) ? { tls: { serverName: host } } : {}),
        } as RequestInit)
      } catch (err) {
        if (signal.aborted) throw err
        last = err
      }
    }
    throw last ?? new Error('no address')
  }

  /** One chat completion: the answer's text and the provider's token count. */
  async complete(req: ChatRequest, signal?: AbortSignal): Promise<{ text: string; usage: Usage }> {
    const deadline = new IdleDeadline(this.config.aiTimeoutMs, signal)
    try {
      const res = await this.open(this.body(req, false), deadline)
      let raw: string
      try {
        raw = await res.text()
      } catch {
        if (deadline.timedOut) throw AiErrors.timeout(`The AI provider did not answer within ${this.config.aiTimeoutMs / 1000} s.`)
        throw AiErrors.providerError('The AI provider closed the connection mid-answer.')
      }
      let j: { choices?: { message?: { content?: unknown } }[]; usage?: unknown }
      try {
        j = JSON.parse(raw)
      } catch {
        throw AiErrors.providerError('The AI provider answered something that is not JSON.')
      }
      const content = j.choices?.[0]?.message?.content
      if (typeof content !== 'string') throw AiErrors.providerError('The AI provider answered without a message.')
      return { text: content, usage: usageOf(j.usage) }
    } finally {
      deadline.clear()
    }
  }

  /**
   * A streamed completion. Resolves once the provider has accepted the request (errors before that are AppErrors,
   * answered as JSON); then `chunks` yields text pieces and finally returns the usage. Aborting `signal` (the client
   * left) cancels the upstream request.
   */
  async stream(req: ChatRequest, signal: AbortSignal): Promise<AsyncGenerator<string, Usage>> {
    const deadline = new IdleDeadline(this.config.aiTimeoutMs, signal)
    let res: Response
    try {
      res = await this.open(this.body(req, true), deadline)
    } catch (err) {
      deadline.clear()
      throw err
    }
    const timeoutMs = this.config.aiTimeoutMs
    return (async function* () {
      const reader = res.body!.getReader()
      const decoder = new TextDecoder()
      let buffer = ''
      let usage: Usage = NO_USAGE
      let sawDone = false
      try {
        for (;;) {
          let r: Awaited<ReturnType<typeof reader.read>>
          try {
            r = await reader.read()
          } catch {
            if (deadline.timedOut) throw AiErrors.timeout(`The AI provider stopped sending for ${timeoutMs / 1000} s.`)
            if (signal.aborted) return usage
            throw AiErrors.providerError('The AI provider closed the connection mid-answer.')
          }
          if (r.done) break
          deadline.touch()
          buffer += decoder.decode(r.value, { stream: true })
          let nl: number
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl).replace(/\r$/, '')
            buffer = buffer.slice(nl + 1)
            if (!line.startsWith('data:')) continue
            const data = line.slice(5).trim()
            if (data === '[DONE]') {
              sawDone = true
              return usage
            }
            let j: { choices?: { delta?: { content?: unknown } }[]; usage?: unknown }
            try {
              j = JSON.parse(data)
            } catch {
              continue
            }
            if (j.usage) usage = usageOf(j.usage)
            const piece = j.choices?.[0]?.delta?.content
            if (typeof piece === 'string' && piece) yield piece
          }
        }
        return usage
      } finally {
        deadline.clear()
        if (sawDone && !deadline.signal.aborted) {
          // A complete answer: read the few bytes after [DONE] (the end of the chunked body) in the background rather
          // than cancel, so the connection goes back to fetch's keep-alive pool and the next call skips the TCP (and
          // TLS) handshake. A provider that keeps the answer open past DRAIN_MS is cancelled as before.
          void drainRest(reader, deadline.controller)
        } else {
          // The client left or we stopped early: cancel the upstream request (the provider sees the connection close).
          await reader.cancel().catch(() => {})
          if (!deadline.signal.aborted) deadline.controller.abort()
        }
      }
    })()
  }

  private body(req: ChatRequest, stream: boolean): Record<string, unknown> {
    const body: Record<string, unknown> = { model: req.model ?? this.config.aiModel, messages: req.messages }
    if (req.maxTokens) body.max_tokens = req.maxTokens
    if (req.temperature !== undefined) body.temperature = req.temperature
    if (stream) {
      body.stream = true
      body.stream_options = { include_usage: true }
    }
    return body
  }
}

const DRAIN_MS = 1_000

/** Reads what is left of a finished answer (bounded by DRAIN_MS); cancels it if it does not end in time. */
async function drainRest(reader: ReadableStreamDefaultReader<Uint8Array>, controller: AbortController): Promise<void> {
  const timer = setTimeout(() => {
    reader.cancel().catch(() => {})
    controller.abort()
  }, DRAIN_MS)
  try {
    for (;;) if ((await reader.read()).done) break
  } catch {
    // cancelled or the connection closed: nothing to keep
  } finally {
    clearTimeout(timer)
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
