import { timingSafeEqual } from 'node:crypto'

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')

export function randomBytes(n: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(n))
}

export function sha256Hex(input: string | Uint8Array): string {
  return new Bun.CryptoHasher('sha256').update(input).digest('hex')
}

/** Constant-time comparison of two strings (false when the lengths differ, without early exit on content). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a)
  const bb = Buffer.from(b)
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab)
    return false
  }
  return timingSafeEqual(ab, bb)
}

export interface IssuedToken {
  /** Public identifier, the row's primary key. */
  id: string
  /** What the caller receives once: `<id>.<secret>`. */
  token: string
  /** SHA-256 of the secret part, the only thing stored. */
  secretHash: string
}

/** A bearer token: a random public id and 32 random secret bytes; only SHA-256(secret) is ever stored. */
export function issueToken(prefix: 'u' | 's'): IssuedToken {
  const id = `${prefix}_${b64url(randomBytes(9))}`
  const secret = b64url(randomBytes(32))
  return { id, token: `${id}.${secret}`, secretHash: sha256Hex(secret) }
}

export function parseToken(token: string): { id: string; secret: string } | null {
  const m = /^([us]_[A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]{43})$/.exec(token)
  return m ? { id: m[1], secret: m[2] } : null
}

export const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: 'argon2id' })
export const verifyPassword = (password: string, hash: string) => Bun.password.verify(password, hash)
