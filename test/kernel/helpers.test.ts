import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { safeCell } from '../../src/kernel/csv'
import { normalizeEmail } from '../../src/kernel/email'
import { publicOrigin } from '../../src/kernel/http'
import { parseIsoDateTime } from '../../src/kernel/dates'
import { bestAcceptLanguage, localeChain } from '../../src/kernel/locale'

setDefaultTimeout(30_000)

/** The helpers every module shares live in the kernel, with one behaviour each. */
describe('kernel helpers', () => {
  test('parseIsoDateTime: strict components, never the roll-over of JavaScript dates', () => {
    for (const bad of ['2026-02-30', '2026-02-29', '2026-04-31', '2026-13-01', '2026-00-10', '2026-01-00', '2026-02-30T10:00Z', '2026-05-01T24:00Z', '2026-05-01T10:60Z', '2026-05-01T10:00:60Z', '2026-05-01T10:00+24:00', '2026-05-01T10:00+01:60', 'tomorrow', '', '2026-5-1']) {
      expect({ bad, parsed: parseIsoDateTime(bad) }).toEqual({ bad, parsed: null })
    }
    expect(parseIsoDateTime('2028-02-29')?.date.toISOString()).toBe('2028-02-29T00:00:00.000Z')
    expect(parseIsoDateTime('2000-02-29T12:00Z')?.date.toISOString()).toBe('2000-02-29T12:00:00.000Z')
    expect(parseIsoDateTime('1900-02-29')).toBeNull()
    expect(parseIsoDateTime('2026-06-01T18:30:15.1234+02:00')).toEqual({ date: new Date('2026-06-01T16:30:15.123Z'), hasTime: true, hasOffset: true })
    expect(parseIsoDateTime('2026-06-01T18:30-0130')?.date.toISOString()).toBe('2026-06-01T20:00:00.000Z')
    expect(parseIsoDateTime('0099-01-01')?.date.getUTCFullYear()).toBe(99)
  })

  test('publicOrigin: PUBLIC_URL, else the request origin as URL.origin spells it, else localhost:PORT', () => {
    const none = { publicUrl: null, port: 8080 }
    expect(publicOrigin({ publicUrl: 'https://cms.example.com', port: 8080 }, 'http://10.0.0.1:8080/v1/x')).toBe('https://cms.example.com')
    expect(publicOrigin(none, 'http://localhost:3000/v1/cdn/a/stories/b')).toBe('http://localhost:3000')
    expect(publicOrigin(none, 'http://localhost:3000')).toBe('http://localhost:3000')
    expect(publicOrigin(none, 'http://Example.COM:80/v1/x')).toBe('http://example.com')
    expect(publicOrigin(none, 'https://example.com:443/v1/x')).toBe('https://example.com')
    expect(publicOrigin(none, 'https://example.com:8443/v1/x')).toBe('https://example.com:8443')
    expect(publicOrigin(none, null)).toBe('http://localhost:8080')
  })

  test('e-mail normalisation and CSV cells', () => {
    expect(normalizeEmail('  Ada@Example.COM ')).toBe('ada@example.com')
    expect(normalizeEmail('not an address')).toBeNull()
    expect(safeCell('=SUM(A1)')).toBe("'=SUM(A1)")
    expect(safeCell('plain')).toBe('plain')
  })

  test('locale negotiation', () => {
    const space = { codes: ['en', 'de-AT', 'fr'], fallbacks: new Map([['fr', 'de-AT']]), defaultLang: 'en' }
    expect(bestAcceptLanguage('fr;q=0.5, de;q=0.9', space.codes)).toBe('de-AT')
    expect(localeChain(space, 'fr')).toEqual(['fr', 'de-AT', 'en'])
  })
})
