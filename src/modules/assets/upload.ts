import Busboy from '@fastify/busboy'
import { closeSync, openSync, writeSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { KernelErrors, validationFailed } from '../../kernel/errors'
import { bytesText } from '../../kernel/http'

/**
 * Reads a multipart/form-data upload as it arrives: the file part streams to a temporary file while SHA-256 runs
 * over it, so memory stays flat whatever the size; the small text parts (`alt`, `alt[<locale>]`, `filename`) are
 * kept. The size cap holds on both paths: a Content-Length above it is refused before a byte is read, and a body
 * without one (chunked) is cut the moment it passes the cap.
 */
export interface ReceivedUpload {
  path: string
  size: number
  sha256: string
  /** The first bytes of the file (magic-byte detection). */
  head: Uint8Array
  partFilename: string
  fields: Map<string, string>
  cleanup(): Promise<void>
}

/** Room for the multipart envelope and the text parts around the file. */
export const UPLOAD_ENVELOPE_BYTES = 64 * 1024
const ENVELOPE_BYTES = UPLOAD_ENVELOPE_BYTES
const HEAD_BYTES = 64 * 1024
const FIELD_BYTES = 16 * 1024
const MAX_FIELDS = 64
const GC_EVERY_BYTES = 8 * 1024 * 1024
const YIELD_EVERY_BYTES = 1024 * 1024

const tooLarge = (max: number) =>
  KernelErrors.payloadTooLarge(`The file is larger than the upload limit of ${bytesText(max)}.`)

export async function receiveUpload(request: Request, maxBytes: number, tmpDir: string): Promise<ReceivedUpload> {
  const contentType = request.headers.get('content-type') ?? ''
  if (!/^multipart\/form-data\s*;.*boundary=/i.test(contentType)) {
    throw KernelErrors.unsupportedMediaType('Send the upload as multipart/form-data with a `file` part.')
  }
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > maxBytes + ENVELOPE_BYTES) throw tooLarge(maxBytes)
  if (!request.body) throw validationFailed({ file: ['is required'] })

  await mkdir(tmpDir, { recursive: true })
  const path = join(tmpDir, `upload-${crypto.randomUUID()}`)
  const cleanup = () => rm(path, { force: true })
  const fields = new Map<string, string>()
  const hasher = new Bun.CryptoHasher('sha256')
  const head = new Uint8Array(HEAD_BYTES)
  let headLength = 0
  let size = 0
  let sinceGc = 0
  let sawFile = false
  let partFilename = ''
  let failure: unknown = null
  let fileDone: Promise<void> = Promise.resolve()
  let fd: number | null = null
  const closeFile = () => {
    if (fd !== null) closeSync(fd)
    fd = null
  }

  const bb = Busboy({
    headers: { 'content-type': contentType },
    limits: { fileSize: maxBytes, files: 1, fields: MAX_FIELDS, fieldSize: FIELD_BYTES, parts: MAX_FIELDS + 1, headerPairs: 32 },
  })
  const fail = (err: unknown) => {
    failure ??= err
  }
  bb.on('file', (name, stream, filename) => {
    if (name !== 'file' || sawFile) {
      fail(validationFailed({ [name]: [name === 'file' ? 'only one file per upload' : 'unknown part: the file goes in `file`'] }))
      stream.resume()
      return
    }
    sawFile = true
    partFilename = filename ?? ''
    fileDone = new Promise<void>((resolve, reject) => {
      stream.on('end', resolve)
      stream.on('error', reject)
    })
    fileDone.catch(() => {}) // awaited after the body is read; an error before then must not go unhandled
    try {
      fd = openSync(path, 'w')
    } catch (err) {
      fail(err)
    }
    // Each piece is written before the handler returns, so it is garbage as soon as the next arrives. Through a write
    // stream pieces stayed queued across ticks, and the process ended a 100 MB body up to ~90 MB larger (young
    // collections did not reliably help); written at once, +10–18 MB. Writes to the page cache take microseconds
    // (PGlite does all its file I/O on this thread anyway).
    stream.on('data', (chunk: Buffer) => {
      if (failure || fd === null) return // the upload failed: the rest of the part is dropped
      size += chunk.length
      hasher.update(chunk)
      if (headLength < HEAD_BYTES) {
        const take = Math.min(HEAD_BYTES - headLength, chunk.length)
        head.set(chunk.subarray(0, take), headLength)
        headLength += take
      }
      try {
        for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at, chunk.length - at)
      } catch (err) {
        fail(err)
      }
      // The collector does not weigh these buffers and lets tens of MB of them pile up; a young-generation
      // collection every 8 MiB (about a millisecond) frees them.
      sinceGc += chunk.length
      if (sinceGc >= GC_EVERY_BYTES) {
        sinceGc = 0
        Bun.gc(false)
      }
    })
    stream.on('limit', () => fail(tooLarge(maxBytes)))
  })
  bb.on('field', (name, value, _nameTruncated, valueTruncated) => {
    if (valueTruncated) fail(validationFailed({ [name]: [`must be at most ${FIELD_BYTES} bytes`] }))
    else fields.set(name, value)
  })
  bb.on('partsLimit', () => fail(validationFailed({ body: ['too many parts'] })))
  bb.on('fieldsLimit', () => fail(validationFailed({ body: ['too many fields'] })))
  bb.on('filesLimit', () => fail(validationFailed({ file: ['only one file per upload'] })))
  const finished = new Promise<void>((resolve, reject) => {
    bb.on('finish', resolve)
    bb.on('error', reject)
  })

  const reader = request.body.getReader()
  let total = 0
  let sinceYield = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      // A chunked body has no Content-Length: cut it as soon as it passes the cap (file plus envelope).
      if (total > maxBytes + ENVELOPE_BYTES) fail(tooLarge(maxBytes))
      if (failure) break
      if (!bb.write(value)) await new Promise<void>((resolve) => bb.once('drain', resolve))
      if (failure) break
      // While the body arrives faster than it is handled, read() resolves at once and nothing here waits on I/O: let
      // other requests in every MiB, else they queued for up to ~50 ms behind a fast 100 MB upload.
      sinceYield += value.byteLength
      if (sinceYield >= YIELD_EVERY_BYTES) {
        sinceYield = 0
        await new Promise((resolve) => setImmediate(resolve))
      }
    }
    if (failure) {
      await reader.cancel().catch(() => {})
      throw failure
    }
    bb.end()
    await finished
    await fileDone
    if (failure) throw failure
    closeFile()
  } catch (err) {
    bb.destroy()
    closeFile() // before the temporary file goes
    await cleanup()
    if (err instanceof Error && !(err as { status?: number }).status && /multipart|boundary|Unexpected end/i.test(err.message)) {
      throw validationFailed({ body: ['is not a well-formed multipart/form-data body'] })
    }
    throw err
  }
  if (!sawFile) {
    await cleanup()
    throw validationFailed({ file: ['is required'] })
  }
  return { path, size, sha256: hasher.digest('hex'), head: head.subarray(0, headLength), partFilename, fields, cleanup }
}
