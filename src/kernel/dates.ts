/**
 * ISO 8601 dates and date-times from clients, read strictly: every component in its range (February 29 only in leap
 * years, hours 0–23, no second 60, offsets up to ±23:59). JavaScript's own parser rolls an impossible date over
 * (`2026-02-30` is March 2), so a value is checked here before it is believed; one parser for every module.
 */
const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/

export interface IsoDateTime {
  /** The instant (a date alone: midnight UTC; a time without an offset: read as UTC). */
  date: Date
  hasTime: boolean
  hasOffset: boolean
}

const daysIn = (year: number, month: number) =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

/** `YYYY-MM-DD`, optionally `THH:mm[:ss[.fraction]]` and `Z` or `±HH:mm`; null for anything else or an impossible value. */
export function parseIsoDateTime(s: string): IsoDateTime | null {
  if (typeof s !== 'string' || s.length > 40) return null
  const m = ISO_RE.exec(s)
  if (!m) return null
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null
  const hasTime = m[4] !== undefined
  const hour = hasTime ? Number(m[4]) : 0
  const minute = hasTime ? Number(m[5]) : 0
  const second = m[6] !== undefined ? Number(m[6]) : 0
  if (hour > 23 || minute > 59 || second > 59) return null
  const ms = m[7] !== undefined ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0
  let offsetMinutes = 0
  const off = m[8]
  if (off !== undefined && off !== 'Z' && off !== 'z') {
    const digits = off.slice(1).replace(':', '')
    const oh = Number(digits.slice(0, 2))
    const om = Number(digits.slice(2))
    if (oh > 23 || om > 59) return null
    offsetMinutes = (off[0] === '-' ? -1 : 1) * (oh * 60 + om)
  }
  const d = new Date(0)
  d.setUTCFullYear(year, month - 1, day)
  d.setUTCHours(hour, minute, second, ms)
  return { date: new Date(d.getTime() - offsetMinutes * 60_000), hasTime, hasOffset: off !== undefined }
}
