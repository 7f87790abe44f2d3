import type { PGlite } from '@electric-sql/pglite'
import type { TransactionSql } from 'postgres'
import type { Tx } from './db'

/**
 * Rows of (integer, integer, bytea) appended inside an open transaction, the bytes sent in the drivers' binary form
 * from one buffer the caller fills in place. Both drivers' own parameter paths send bytea as text (hex, or base64
 * through decode()) and copy each value several times in JavaScript: a 100 MB upload then left hundreds of MB of
 * strings and buffers for the collector and took 3–6 s. Here a row costs no JavaScript allocation of its size.
 */
export interface ByteaRows {
  /** Room for one row's bytes: fill `bytes.subarray(0, n)`, then `append(a, b, n)`. Reused for every row. */
  readonly bytes: Uint8Array
  append(a: number, b: number, n: number): Promise<void>
}

export interface ByteaTarget {
  table: string
  /** The two integer columns and the bytea column, in that order. */
  columns: readonly [string, string, string]
  /** The largest row `bytes` must hold. */
  maxBytes: number
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`

/** The driver's client behind a drizzle transaction (both drizzle sessions keep it as `client`). */
function sessionClient<T>(tx: Tx): T {
  return (tx as unknown as { session: { client: T } }).session.client
}

/**
 * PGlite: Parse, Bind (binary parameters), Execute and Sync built once into one buffer, the row's bytes read straight
 * into their place in the Bind message, run through `execProtocolStream` on the one connection the transaction holds
 * (its mutex keeps every other query out until it ends).
 */
export async function pgliteByteaRows(client: PGlite, tx: Tx, target: ByteaTarget, fill: (rows: ByteaRows) => Promise<void>) {
  const inner = sessionClient<{ closed?: boolean }>(tx)
  if (inner.closed !== false) throw new Error('byteaRows needs an open PGlite transaction')
  const [a, b, c] = target.columns.map(ident)
  const text = new TextEncoder().encode(`insert into ${ident(target.table)} (${a}, ${b}, ${c}) values ($1, $2, $3)`)
  const parseLength = 4 + 1 + text.length + 1 + 2 + 3 * 4
  // Bind: length, portal, statement, one format code (binary) for all, three parameters as (length, bytes).
  const bindHead = 4 + 1 + 1 + 2 + 2 + 2 + (4 + 4) * 2 + 4
  const msg = Buffer.alloc(1 + parseLength + 1 + bindHead + target.maxBytes + 2 + 10 + 5)
  let at = 0
  msg[at++] = 0x50 // Parse (unnamed statement)
  at = msg.writeInt32BE(parseLength, at)
  msg[at++] = 0
  msg.set(text, at)
  at += text.length
  msg[at++] = 0
  at = msg.writeInt16BE(3, at)
  at = msg.writeInt32BE(23, at) // int4
  at = msg.writeInt32BE(23, at)
  at = msg.writeInt32BE(17, at) // bytea
  const bindAt = at
  const dataAt = bindAt + 1 + bindHead
  const bytes = msg.subarray(dataAt, dataAt + target.maxBytes)
  let appended = 0
  await fill({
    bytes,
    async append(x, y, n) {
      if (n > target.maxBytes) throw new Error('row larger than maxBytes')
      let p = bindAt
      msg[p++] = 0x42 // Bind
      p = msg.writeInt32BE(bindHead + n + 2, p)
      msg[p++] = 0
      msg[p++] = 0
      p = msg.writeInt16BE(1, p)
      p = msg.writeInt16BE(1, p) // binary
      p = msg.writeInt16BE(3, p)
      p = msg.writeInt32BE(4, p)
      p = msg.writeInt32BE(x, p)
      p = msg.writeInt32BE(4, p)
      p = msg.writeInt32BE(y, p)
      p = msg.writeInt32BE(n, p)
      p += n // the bytes are already in place
      p = msg.writeInt16BE(0, p) // results in text (there are none)
      msg[p++] = 0x45 // Execute
      p = msg.writeInt32BE(9, p)
      msg[p++] = 0
      p = msg.writeInt32BE(0, p)
      msg[p++] = 0x53 // Sync (inside the transaction block: it stays open, or aborted on an error)
      p = msg.writeInt32BE(4, p)
      await client.execProtocolStream(msg.subarray(0, p), { syncToFs: false })
      // Every statement leaves short-lived garbage behind that the collector does not weigh (PGlite's file-system
      // calls: hundreds per MiB), so without help 100 rows grew the process by 13 MB, and by over 100 MB while new
      // WAL segments were zero-filled. A young-generation collection every 8 rows (about a millisecond) frees it.
      if (++appended % 8 === 0) Bun.gc(false)
    },
  })
}

/**
 * Postgres: `COPY … FROM STDIN (FORMAT binary)` on the transaction's connection, one write per row from the same
 * buffer, each awaited until the socket has taken it (so the buffer can be refilled and nothing queues up).
 */
export async function postgresByteaRows(tx: Tx, target: ByteaTarget, fill: (rows: ByteaRows) => Promise<void>) {
  const sql = sessionClient<TransactionSql>(tx)
  const [a, b, c] = target.columns.map(ident)
  const copy = await sql.unsafe(`copy ${ident(target.table)} (${a}, ${b}, ${c}) from stdin with (format binary)`).writable()
  let failure: Error | null = null
  // A row the server refuses ends the COPY; postgres.js then destroys the stream with the server's error.
  copy.on('error', (err: Error) => {
    failure ??= err
  })
  const write = (chunk: Uint8Array) =>
    new Promise<void>((resolve, reject) => copy.write(chunk, (err) => (err || failure ? reject(failure ?? err) : resolve())))
  const TUPLE_HEAD = 2 + (4 + 4) * 2 + 4
  const buf = Buffer.alloc(TUPLE_HEAD + target.maxBytes)
  const bytes = buf.subarray(TUPLE_HEAD)
  let appended = 0
  try {
    // Signature, flags, header extension length.
    await write(Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]))
    await fill({
      bytes,
      async append(x, y, n) {
        if (n > target.maxBytes) throw new Error('row larger than maxBytes')
        let p = buf.writeInt16BE(3, 0)
        p = buf.writeInt32BE(4, p)
        p = buf.writeInt32BE(x, p)
        p = buf.writeInt32BE(4, p)
        p = buf.writeInt32BE(y, p)
        buf.writeInt32BE(n, p)
        await write(buf.subarray(0, TUPLE_HEAD + n))
        // postgres.js copies each row into a message of its own: collected young as above (without it the process
        // swung by ~20 MB between the collector's own rounds).
        if (++appended % 8 === 0) Bun.gc(false)
      },
    })
    await write(Buffer.from([0xff, 0xff]))
  } catch (err) {
    // CopyFail, so that the connection leaves COPY mode and the transaction can roll back.
    if (!copy.destroyed) copy.destroy(err instanceof Error ? err : new Error(String(err)))
    throw err
  }
  // postgres.js answers end() only when the COPY succeeds: an error the server reports after the last row (when all
  // rows were already on the wire) is dropped and the callback never comes. A statement queued behind the COPY
  // settles either way: it fails if the COPY did (the transaction is aborted), so that is what is awaited.
  if (failure) throw failure
  copy.end()
  try {
    await sql`select 1`
  } catch (err) {
    throw failure ?? new Error(`COPY into ${target.table} failed on the server (${(err as Error).message})`, { cause: err })
  }
}
