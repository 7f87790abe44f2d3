// A fake OpenAI-compatible chat-completions server on 127.0.0.1 (real HTTP): JSON answers, SSE streams, error
// answers and slow answers, as the test's responder says. It records every request and sees a client abort.

export interface AiCall {
  path: string
  headers: Record<string, string>
  body: any
  /** The caller closed the connection before the answer ended (stream cancelled). */
  aborted: boolean
  /** The caller's TCP port: calls with the same port came over one kept-alive connection. */
  remotePort: number
}

export type AiAnswer =
  | { kind: 'json'; text: string; usage?: { prompt_tokens: number; completion_tokens: number }; delayMs?: number }
  | { kind: 'stream'; chunks: string[]; chunkDelayMs?: number; usage?: { prompt_tokens: number; completion_tokens: number }; firstDelayMs?: number }
  | { kind: 'error'; status: number; message: string; headers?: Record<string, string> }
  | { kind: 'hang' }

export interface FakeAi {
  url: string
  calls: AiCall[]
  respond(fn: (call: AiCall, index: number) => AiAnswer): void
  waitFor(pred: () => boolean, timeoutMs?: number): Promise<void>
  stop(): Promise<void>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export function startFakeAi(): FakeAi {
  const calls: AiCall[] = []
  let responder: (call: AiCall, index: number) => AiAnswer = (call) => ({ kind: 'json', text: `echo: ${call.body?.model}` })
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 120,
    async fetch(request, server) {
      const body = await request.json().catch(() => null)
      const call: AiCall = { path: new URL(request.url).pathname, headers: Object.fromEntries(request.headers), body, aborted: false, remotePort: server.requestIP(request)?.port ?? 0 }
      calls.push(call)
      request.signal.addEventListener('abort', () => (call.aborted = true), { once: true })
      const answer = responder(call, calls.length - 1)
      if (answer.kind === 'error') {
        return Response.json({ error: { message: answer.message, type: 'fake' } }, { status: answer.status, headers: answer.headers })
      }
      if (answer.kind === 'hang') {
        await new Promise<void>((resolve) => request.signal.addEventListener('abort', () => resolve(), { once: true }))
        return new Response('')
      }
      if (answer.kind === 'json') {
        if (answer.delayMs) await sleep(answer.delayMs)
        return Response.json({
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          model: body?.model,
          choices: [{ index: 0, message: { role: 'assistant', content: answer.text }, finish_reason: 'stop' }],
          usage: answer.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        })
      }
      const enc = new TextEncoder()
      const line = (o: unknown) => enc.encode(`data: ${JSON.stringify(o)}\n\n`)
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          try {
            if (answer.firstDelayMs) await sleep(answer.firstDelayMs)
            for (const c of answer.chunks) {
              if (call.aborted) return
              controller.enqueue(line({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: c } }] }))
              if (answer.chunkDelayMs) await sleep(answer.chunkDelayMs)
            }
            if (call.aborted) return
            controller.enqueue(line({ id: 'x', object: 'chat.completion.chunk', choices: [], usage: answer.usage ?? { prompt_tokens: 7, completion_tokens: answer.chunks.length } }))
            controller.enqueue(enc.encode('data: [DONE]\n\n'))
            controller.close()
          } catch {
            call.aborted = true
          }
        },
        cancel() {
          call.aborted = true
        },
      })
      return new Response(stream, { headers: { 'Content-Type': 'text/event-stream' } })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    calls,
    respond(fn) {
      responder = fn
    },
    async waitFor(pred, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs
      while (!pred()) {
        if (Date.now() > end) throw new Error('fake AI: condition not met in time')
        await sleep(10)
      }
    },
    async stop() {
      await server.stop(true)
    },
  }
}
