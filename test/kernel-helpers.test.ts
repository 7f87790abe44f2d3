import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { safeCell } from '../src/kernel/csv'
import { normalizeEmail } from '../src/kernel/email'
import { publicOrigin } from '../src/kernel/http'
import { bestAcceptLanguage, localeChain } from '../src/kernel/locale'

setDefaultTimeout(30_000)

/** The helpers every module shares live in the kernel, with one behaviour each. */
describe('kernel helpers', () => {
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
