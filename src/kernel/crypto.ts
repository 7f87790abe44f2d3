import { timingSafeEqual } from 'node:crypto'
import { createCipheriv, createDecipheriv } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'

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

/**
 * A capability token for a link (invitations, confirm and unsubscribe links, password resets): 32 random bytes,
 * base64url (43 characters). Only `hash` (SHA-256 of the token) is stored; the token itself exists only in the link.
 */
export function newCapabilityToken(): { token: string; hash: string } {
  const token = b64url(randomBytes(32))
  return { token, hash: sha256Hex(token) }
}

export function parseToken(token: string): { id: string; secret: string } | null {
  const m = /^([us]_[A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]{43})$/.exec(token)
  return m ? { id: m[1], secret: m[2] } : null
}

/** The argon2id cost of a new hash: memory in KiB and passes (config PASSWORD_HASH_MEMORY_KIB, PASSWORD_HASH_PASSES). */
export interface PasswordHashCost {
  memoryCost: number
  timeCost: number
}

export const hashPassword = (cost: PasswordHashCost, password: string) =>
  Bun.password.hash(password, { algorithm: 'argon2id', memoryCost: cost.memoryCost, timeCost: cost.timeCost })
/** Verifies against the cost the hash records (a hash made under another cost still verifies). */
export const verifyPassword = (password: string, hash: string) => Bun.password.verify(password, hash)

// ---- HMAC signatures and sealed secrets (webhooks, datasource push) ----

/** Hex HMAC-SHA256 of the concatenated `parts` under `key`. */
export function hmacSha256Hex(key: string | Uint8Array, ...parts: (string | Uint8Array)[]): string {
  const h = new Bun.CryptoHasher('sha256', key)
  for (const p of parts) h.update(p)
  return h.digest('hex')
}

/** `sha256=<hex>` over `<timestamp>.<raw body bytes>`: the X-Service-Signature of spec section 6. */
export function signDelivery(secret: string, timestamp: number, body: string | Uint8Array): string {
  return `sha256=${hmacSha256Hex(secret, `${timestamp}.`, body)}`
}

/** A random secret handed to a user once (webhook signing secrets): a prefix and 32 random bytes. */
export function randomSecret(prefix: string): string {
  return `${prefix}${b64url(randomBytes(32))}`
}

/**
 * Parses a 32-byte key given as 64 hex characters or as base64/base64url (43 or 44 characters); null when it is
 * neither.
 */
export function parseSecretKey(raw: string): Uint8Array | null {
  const s = raw.trim()
  if (/^[0-9a-fA-F]{64}$/.test(s)) return new Uint8Array(Buffer.from(s, 'hex'))
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(s)) {
    const bytes = Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
    if (bytes.length === 32) return new Uint8Array(bytes)
  }
  return null
}

/**
 * The key file of the embedded default: read it, or create it once (mode 0600) with 32 random bytes. Creation uses
 * the exclusive flag, so two processes starting at once end up with the same key.
 */
export function loadOrCreateKeyFile(path: string): Uint8Array {
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true })
    try {
      writeFileSync(path, `${Buffer.from(randomBytes(32)).toString('hex')}\n`, { flag: 'wx', mode: 0o600 })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
  }
  const key = parseSecretKey(readFileSync(path, 'utf8'))
  if (!key) throw new Error(`${path} does not hold a 32-byte key (64 hex characters)`)
  return key
}

/**
 * Seals short secrets at rest with AES-256-GCM: `v1.<iv>.<ciphertext>.<tag>` (base64url), a fresh 12-byte IV each
 * time. `context` is bound as additional data, so a sealed value copied to another purpose does not open.
 */
export class SecretBox {
  private key: Uint8Array

  constructor(key: Uint8Array) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key')
    this.key = key
  }

  /**
   * A key for one purpose (signing image URLs), derived from the sealing key: every instance holding the same
   * SERVICE_SECRET_KEY derives the same one, and it opens nothing sealed.
   */
  derive(purpose: string): Uint8Array {
    return new Uint8Array(new Bun.CryptoHasher('sha256', this.key).update(`derive:${purpose}`).digest())
  }

  seal(plain: string, context = ''): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    cipher.setAAD(Buffer.from(context))
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    return `v1.${b64url(iv)}.${b64url(ct)}.${b64url(cipher.getAuthTag())}`
  }

  /** Throws when the value was not sealed with this key and context, or was altered. */
  open(sealed: string, context = ''): string {
    const [version, iv, ct, tag] = sealed.split('.')
    if (version !== 'v1' || !iv || ct === undefined || !tag) throw new Error('not a sealed secret')
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'))
    decipher.setAAD(Buffer.from(context))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8')
  }
}
