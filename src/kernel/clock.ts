/** The only source of time. Tests move it; production reads the system clock. */
export interface Clock {
  now(): Date
  /** The same instant in epoch milliseconds, without a Date: what hot paths (rate limits, cache expiries) compare. */
  ms(): number
}

export const systemClock: Clock = { now: () => new Date(), ms: () => Date.now() }

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  private t: number
  constructor(start: Date | number = Date.now()) {
    this.t = typeof start === 'number' ? start : start.getTime()
  }
  now() {
    return new Date(this.t)
  }
  ms() {
    return this.t
  }
  advance(ms: number) {
    this.t += ms
  }
  set(at: Date | number) {
    this.t = typeof at === 'number' ? at : at.getTime()
  }
}
