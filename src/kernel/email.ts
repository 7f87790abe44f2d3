/** E-mail addresses as every module stores and compares them (subscribers, form notification addresses). */

const EMAIL_RE = /^[^\s@<>()",;:\\[\]]+@[^\s@<>()",;:\\[\]]+\.[^\s@<>()",;:\\[\]]+$/

/** Lower-cased, trimmed; null when it is not an address. */
export function normalizeEmail(raw: string): string | null {
  const e = raw.trim().toLowerCase()
  return e.length <= 254 && EMAIL_RE.test(e) ? e : null
}
