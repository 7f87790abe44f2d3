import { isbot } from 'isbot'
import type { Kernel } from '../../kernel/kernel'
import { readBodyCapped } from '../../kernel/http'
import { canonicalLocale } from '../../kernel/locale'
import { isUuid } from '../../kernel/schemas'
import type { PublicSpace } from '../spaces/public'
import type { BeaconBuffer } from './buffer'

/** Bodies over this are dropped unread (spec: the beacon is a handful of short fields). */
export const BEACON_MAX_BYTES = 4096
/** Spec 4.2 / 8: 600 per minute per IP. */
export const BEACON_LIMIT = 600
export const BEACON_WINDOW_MS = 60_000

export type Device = 'desktop' | 'mobile' | 'tablet'
const DEVICES = new Set<string>(['desktop', 'mobile', 'tablet'])

/** An accepted mount, as stored: nothing that identifies the visitor. */
export interface BeaconRow {
  spaceId: number
  storyUuid: string
  segmentKey: string | null
  lang: string | null
  device: Device
  referrer: string | null
  at: Date
}

/** Why a beacon was not stored; each reason is counted (BeaconMetrics). */
export type DropReason =
  | 'rate_limited'
  | 'content_type'
  | 'too_large'
  | 'parse'
  | 'bot'
  | 'space'
  | 'story'
  | 'buffer_full'
  | 'write_failed'

export interface BeaconMetrics {
  received: number
  accepted: number
  written: number
  /** Multi-row inserts made (one per flush of up to 1,000 rows). */
  inserts: number
  dropped: Record<DropReason, number>
}

export const newMetrics = (): BeaconMetrics => ({
  received: 0,
  accepted: 0,
  written: 0,
  inserts: 0,
  dropped: { rate_limited: 0, content_type: 0, too_large: 0, parse: 0, bot: 0, space: 0, story: 0, buffer_full: 0, write_failed: 0 },
})

/**
 * The beacon's own per-IP limiter: fixed one-minute windows in this process's memory, never in the database (the
 * address is a Map key and nothing else). A sweep every minute drops ended windows, so an address is forgotten at
 * most about two minutes after its last beacon — within the spec's 10 minutes.
 */
export class BeaconLimiter {
  private windows = new Map<string, { count: number; resetAt: number }>()
  private timer: ReturnType<typeof setInterval> | null = null

  constructor(
    private now: () => number,
    readonly limit = BEACON_LIMIT,
    readonly windowMs = BEACON_WINDOW_MS,
  ) {}

  /** Counts one beacon of `ip`; false when over the limit. */
  allow(ip: string): boolean {
    const now = this.now()
    let w = this.windows.get(ip)
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + this.windowMs }
      this.windows.set(ip, w)
    }
    return ++w.count <= this.limit
  }

  /** Forgets every ended window. */
  sweep() {
    const now = this.now()
    for (const [k, v] of this.windows) if (v.resetAt <= now) this.windows.delete(k)
  }

  /** How many addresses are remembered (tests). */
  get size() {
    return this.windows.size
  }

  start() {
    this.timer ??= setInterval(() => this.sweep(), this.windowMs)
    this.timer.unref?.()
  }

  stop() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    this.windows.clear()
  }
}

/** `application/json` or `text/plain` (what navigator.sendBeacon sends for a string), with any parameters. */
export function acceptedContentType(header: string | null): boolean {
  if (header === null) return false
  const semi = header.indexOf(';')
  const type = (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase()
  return type === 'application/json' || type === 'text/plain'
}

/** Reads at most `limit` bytes of the body; null when it is longer (the rest is not read). */
export function readBody(request: Request, limit = BEACON_MAX_BYTES): Promise<Uint8Array | null> {
  return readBodyCapped(request, limit)
}

const decoder = new TextDecoder('utf-8', { fatal: true })

/** The body fields (spec 4.3), all optional; anything else in the body is ignored. */
export interface BeaconBody {
  story_uuid?: unknown
  segment_key?: unknown
  lang?: unknown
  referrer?: unknown
  device?: unknown
}

/** Step `parse`: UTF-8 JSON text of an object. */
export function parseBody(bytes: Uint8Array): BeaconBody | null {
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    return null
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as BeaconBody) : null
}

const TABLET_RE = /iPad|Tablet|PlayBook|Silk|Kindle|Nexus (?:7|9|10)|SM-T\d|Android(?!.*Mobile)/i
const MOBILE_RE = /Mobi|iPhone|iPod|Android|Windows Phone|BlackBerry|BB10|Opera Mini|IEMobile/i

/** The device class a User-Agent announces (tablet before mobile: an Android tablet has no "Mobile" token). */
export function deviceFromUserAgent(ua: string): Device {
  if (TABLET_RE.test(ua)) return 'tablet'
  if (MOBILE_RE.test(ua)) return 'mobile'
  return 'desktop'
}

/** `scheme://host[:port]` of an http(s) URL, lower case; null for anything else. */
export function referrerOrigin(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return null
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return null
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null
  if (!url.hostname) return null
  const origin = url.origin.toLowerCase()
  return origin.length <= 255 ? origin : null
}

/** Segment keys are short identifiers; anything else cannot name a segment. */
const SEGMENT_KEY_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/

/** The segments module's check (issue "personalisation"); absent while that module does not offer it. */
export type SegmentCheck = (spaceId: number, key: string) => boolean | Promise<boolean>

export interface PipelineDeps {
  kernel: Pick<Kernel, 'clock' | 'logger'>
  spaces: { get(slug: string): PublicSpace | null | Promise<PublicSpace | null> }
  published: { has(spaceId: number, uuid: string): boolean | Promise<boolean> }
  isSegmentKey: SegmentCheck | null
  buffer: BeaconBuffer
  metrics: BeaconMetrics
}

/**
 * The beacon pipeline after the response went out: parse → bot → Space → Story → normalise → buffer. Each step may
 * drop the event (the reason is counted); nothing is answered from here, so nothing can leak to the client. Steps
 * decide from memory (the Space and published-Story caches); only a cold cache awaits a load.
 */
export class BeaconPipeline {
  constructor(private deps: PipelineDeps) {}

  private drop(reason: DropReason): void {
    this.deps.metrics.dropped[reason]++
  }

  /** Runs the steps; never throws. Returns the stored row (tests) or null when dropped. */
  async run(spaceSlug: string, bytes: Uint8Array, userAgent: string | null): Promise<BeaconRow | null> {
    try {
      // parse
      const body = parseBody(bytes)
      if (!body || typeof body.story_uuid !== 'string' || !isUuid(body.story_uuid)) return this.drop('parse'), null
      // bot: a maintained detector over the User-Agent; a request without one is no browser's beacon.
      if (!userAgent || isbot(userAgent)) return this.drop('bot'), null
      // Space
      let space = this.deps.spaces.get(spaceSlug)
      if (space instanceof Promise) space = await space
      if (!space) return this.drop('space'), null
      // Story: a published Story of that Space, from the in-memory index.
      const storyUuid = body.story_uuid.toLowerCase()
      let known = this.deps.published.has(space.id, storyUuid)
      if (known instanceof Promise) known = await known
      if (!known) return this.drop('story'), null
      // normalise
      const row: BeaconRow = {
        spaceId: space.id,
        storyUuid,
        segmentKey: await this.segment(space.id, body.segment_key),
        lang: typeof body.lang === 'string' ? canonicalLocale(body.lang) : null,
        device: typeof body.device === 'string' && DEVICES.has(body.device) ? (body.device as Device) : deviceFromUserAgent(userAgent),
        referrer: referrerOrigin(body.referrer),
        at: this.deps.kernel.clock.now(),
      }
      // buffer
      if (!this.deps.buffer.push(row)) return this.drop('buffer_full'), null
      this.deps.metrics.accepted++
      return row
    } catch (err) {
      this.deps.kernel.logger.warn('beacon pipeline failed', { error: String(err) })
      this.drop('parse')
      return null
    }
  }

  private async segment(spaceId: number, key: unknown): Promise<string | null> {
    const check = this.deps.isSegmentKey
    if (!check || typeof key !== 'string' || !SEGMENT_KEY_RE.test(key)) return null
    try {
      return (await check(spaceId, key)) ? key : null
    } catch {
      return null
    }
  }
}
