/**
 * An estimate of the heap bytes a plain value holds, for the byte budgets of caches (kernel/cache.ts) whose values are
 * small records: strings at two bytes a character plus a header, numbers and booleans at a word, objects, arrays, Maps
 * and Sets at a header plus their members. It is an estimate — engines share strings and pack objects — that errs
 * high, so a budget is not exceeded by much in practice; values with bytes of their own (Blobs, buffers) count those.
 * Depth is bounded: past MAX_DEPTH a member counts as a flat 64 bytes.
 */

const MAX_DEPTH = 8
const HEADER = 32

export function approxBytes(value: unknown, depth = 0): number {
  switch (typeof value) {
    case 'string':
      return HEADER / 2 + value.length * 2
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return 8
    case 'function':
    case 'symbol':
      return 16
  }
  if (value === null) return 8
  if (depth >= MAX_DEPTH) return 64
  const d = depth + 1
  if (value instanceof Blob) return HEADER + value.size
  if (ArrayBuffer.isView(value)) return HEADER + value.byteLength
  if (value instanceof ArrayBuffer) return HEADER + value.byteLength
  if (value instanceof Date) return HEADER
  if (value instanceof RegExp) return HEADER + value.source.length * 2
  let n = HEADER
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) n += 8 + approxBytes(value[i], d)
    return n
  }
  if (value instanceof Map) {
    for (const [k, v] of value) n += 16 + approxBytes(k, d) + approxBytes(v, d)
    return n
  }
  if (value instanceof Set) {
    for (const v of value) n += 8 + approxBytes(v, d)
    return n
  }
  for (const k in value as Record<string, unknown>) n += 8 + k.length + approxBytes((value as Record<string, unknown>)[k], d)
  return n
}
