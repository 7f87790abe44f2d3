/** A push datasource's secret, handed from the create dialog to its page (memory only, read once). */
const pending = new Map<string, string>()
export const keepSecret = (key: string, secret: string) => pending.set(key, secret)
export function takeSecret(key: string): string | null {
  const s = pending.get(key) ?? null
  pending.delete(key)
  return s
}
