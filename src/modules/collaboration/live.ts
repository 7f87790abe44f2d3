import type { Principal } from '../../kernel/auth'
import type { Clock } from '../../kernel/clock'
import type { Kernel } from '../../kernel/kernel'
import { KernelErrors } from '../../kernel/errors'

/** The sweep of stream deadlines, and the unit keep-alives are counted in. */
const TICK_MS = 1000
const HEARTBEAT_TICKS = 25
const RETRY_MS = 3000
const encoder = new TextEncoder()
const ending = (reason: string) => encoder.encode(`event: closing\ndata: ${JSON.stringify({ reason, retry_ms: RETRY_MS })}\n\n`)
const SHUTDOWN_EVENT = encoder.encode(`event: shutdown\ndata: ${JSON.stringify({ reason: 'server_shutdown', retry_ms: RETRY_MS })}\n\n`)
/** The stream's lifetime (or its token's expiry) is over: the client reconnects, and its access is checked anew. */
const LIFETIME_EVENT = ending('lifetime')
/** The caller's access ended (removed from the Space, token revoked, signed out): reconnecting would be refused. */
const ACCESS_ENDED_EVENT = ending('access_ended')
const CONNECTED = encoder.encode(`retry: ${RETRY_MS}\n: connected\n\n`)
const KEEP_ALIVE = encoder.encode(': keep-alive\n\n')

/** Whose a stream is, as the events that end access name it. */
export interface StreamOwner {
  spaceId: number
  storyUuid: string
  /** The person of a login session; null for a Space token (its creator's removal revokes the token instead). */
  userId: number | null
  tokenId: string
  /** What the per-principal cap counts: one person across all their sessions, or one Space token. */
  principalKey: string
  /** Kernel-clock ms at which the stream is ended: its lifetime, or its token's expiry when sooner. */
  endsAtMs: number
}

interface Listener extends StreamOwner {
  send(chunk: Uint8Array): void
  close(last?: Uint8Array): void
}

export interface LiveLimits {
  perPrincipal: number
  maxSeconds: number
}

/**
 * The live stream of a Story (Server-Sent Events): who is present, comment changes, new versions. Listeners are per
 * process; events reach them from this instance at commit and from the others through LISTEN/NOTIFY (the module's
 * `on` handlers), so a client connected to any instance sees every change.
 *
 * A stream lives no longer than the access it was opened with: it ends when its holder is removed from the Space or
 * its token is revoked or signed out (events, on every instance), when its token expires, and after `maxSeconds` in
 * any case (the client reconnects through the guards, which check access anew). One principal holds at most
 * `perPrincipal` streams on an instance: one more answers 429 `rate_limited` (the kernel's code: a limit reached).
 */
export class LiveHub {
  private byStory = new Map<string, Set<Listener>>()
  private byPrincipal = new Map<string, Set<Listener>>()
  private timer: ReturnType<typeof setInterval> | null = null
  private ticks = 0

  constructor(
    private clock: Clock,
    private limits: LiveLimits,
  ) {}

  get listeners(): number {
    let n = 0
    for (const s of this.byStory.values()) n += s.size
    return n
  }

  /**
   * A `text/event-stream` Response that stays open until the client leaves, its access or lifetime ends, or the
   * process shuts down. Throws 429 `rate_limited` when the principal holds the most streams it may already.
   */
  open(storyUuid: string, spaceId: number, principal: Principal, headers: Record<string, string>): Response {
    const principalKey = principal.kind === 'user' ? `u:${principal.userId}` : `t:${principal.tokenId}`
    const held = this.byPrincipal.get(principalKey)?.size ?? 0
    if (held >= this.limits.perPrincipal) {
      throw KernelErrors.rateLimited(
        `At most ${this.limits.perPrincipal} live streams may be open at once with this ${principal.kind === 'user' ? 'account' : 'token'}; close one (or wait for one to end) and retry.`,
        undefined,
        { 'Retry-After': String(RETRY_MS / 1000), 'RateLimit-Limit': String(this.limits.perPrincipal), 'RateLimit-Remaining': '0' },
      )
    }
    const lifetimeEnd = this.clock.ms() + this.limits.maxSeconds * 1000
    const hub = this
    let controller!: ReadableStreamDefaultController<Uint8Array>
    let open = true
    const listener: Listener = {
      spaceId,
      storyUuid,
      userId: principal.kind === 'user' ? principal.userId : null,
      tokenId: principal.tokenId,
      principalKey,
      endsAtMs: principal.expiresAt ? Math.min(lifetimeEnd, principal.expiresAt.getTime()) : lifetimeEnd,
      send(chunk) {
        if (!open) return
        try {
          controller.enqueue(chunk)
        } catch {
          this.close()
        }
      },
      close(last) {
        if (!open) return
        if (last) this.send(last)
        open = false
        hub.remove(listener)
        try {
          controller.close()
        } catch {}
      },
    }
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c
      },
      cancel() {
        listener.close()
      },
    })
    // Registered here, synchronously after the count above: two opens at once cannot both take the last place.
    this.add(listener)
    listener.send(CONNECTED)
    return new Response(stream, {
      headers: { ...headers, 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' },
    })
  }

  publish(storyUuid: string, event: string, data: unknown) {
    const set = this.byStory.get(storyUuid)
    if (!set?.size) return
    // Serialized and encoded once per event, not once per listener (the bytes are never written to).
    const chunk = encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    for (const l of [...set]) l.send(chunk)
  }

  /** A member left or was removed: their streams of that Space end (`closing` with reason `access_ended`). */
  endMember(spaceId: number, userId: number) {
    this.endWhere((l) => l.spaceId === spaceId && l.userId === userId)
  }

  /** Tokens were revoked or signed out: the streams opened with them end. */
  endTokens(tokenIds: readonly string[]) {
    if (!tokenIds.length) return
    const ids = new Set(tokenIds)
    this.endWhere((l) => ids.has(l.tokenId))
  }

  private endWhere(match: (l: Listener) => boolean) {
    for (const set of [...this.byPrincipal.values()]) for (const l of [...set]) if (match(l)) l.close(ACCESS_ENDED_EVENT)
  }

  /** Ends the streams whose lifetime (or token) ran out on the kernel clock; every `HEARTBEAT_TICKS`, keep-alives. */
  private tick() {
    const now = this.clock.ms()
    const heartbeat = ++this.ticks % HEARTBEAT_TICKS === 0
    for (const set of [...this.byStory.values()]) {
      for (const l of [...set]) {
        if (now >= l.endsAtMs) l.close(LIFETIME_EVENT)
        // Comment lines keep proxies from closing an idle stream.
        else if (heartbeat) l.send(KEEP_ALIVE)
      }
    }
  }

  private add(l: Listener) {
    let set = this.byStory.get(l.storyUuid)
    if (!set) this.byStory.set(l.storyUuid, (set = new Set()))
    set.add(l)
    let mine = this.byPrincipal.get(l.principalKey)
    if (!mine) this.byPrincipal.set(l.principalKey, (mine = new Set()))
    mine.add(l)
    this.timer ??= setInterval(() => this.tick(), TICK_MS)
  }

  private remove(l: Listener) {
    const set = this.byStory.get(l.storyUuid)
    set?.delete(l)
    if (set && !set.size) this.byStory.delete(l.storyUuid)
    const mine = this.byPrincipal.get(l.principalKey)
    mine?.delete(l)
    if (mine && !mine.size) this.byPrincipal.delete(l.principalKey)
    if (!this.byStory.size && this.timer) {
      clearInterval(this.timer)
      this.timer = null
    }
  }

  /**
   * Ends every stream (shutdown): a last `shutdown` event tells the client this instance is going away, then the
   * stream closes and EventSource reconnects after `retry` — through the load balancer, to an instance still running.
   */
  closeAll() {
    for (const s of [...this.byStory.values()]) for (const l of [...s]) l.close(SHUTDOWN_EVENT)
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }
}

export function createLiveHub(kernel: Kernel) {
  return new LiveHub(kernel.clock, { perPrincipal: kernel.config.liveStreamsPerPrincipal, maxSeconds: kernel.config.liveStreamMaxSeconds })
}
