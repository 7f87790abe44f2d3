import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'

/**
 * A streaming replica of the test Postgres server (TEST_DATABASE_URL), for the read-replica tests: `pg_basebackup`
 * of the server into a temporary folder, then a hot standby on a free port, stopped and deleted by `remove()`. Needs
 * the server's binaries on this machine (/usr/lib/postgresql/<major>/bin), a server that accepts replication
 * connections from 127.0.0.1 (wal_level replica, max_wal_senders, a `replication` line in pg_hba.conf), and — when the
 * tests run as root — the `postgres` OS user (a server refuses to run as root). When something is missing,
 * `startStandby` answers why, as a string, and the tests skip saying so.
 */
export interface Standby {
  port: number
  /** `databaseUrl` (a database of the primary) on the standby. */
  urlOf(databaseUrl: string): string
  /** SQL on the standby as the superuser (pg_wal_replay_pause() …). */
  query(text: string): Promise<Record<string, unknown>[]>
  /** Stops the standby (fast shutdown: sessions are ended). */
  stop(): Promise<void>
  /** Stops it if running and deletes its folder. */
  remove(): Promise<void>
}

async function run(cmd: string[], asPostgres: boolean): Promise<{ ok: boolean; out: string }> {
  const argv = asPostgres ? ['runuser', '-u', 'postgres', '--', ...cmd] : cmd
  const p = Bun.spawn(argv, { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { ok: code === 0, out: `${out}${err}`.trim() }
}

function freePort(): number {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

/** The replica, or why there can be none here. */
export async function startStandby(serverUrl: string): Promise<Standby | string> {
  const primary = new URL(serverUrl)
  const host = primary.hostname || '127.0.0.1'
  const port = primary.port || '5432'
  const user = decodeURIComponent(primary.username) || 'postgres'
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  let settings: Record<string, string>
  try {
    const rows = await admin<{ name: string; setting: string }[]>`
      select name, setting from pg_settings
      where name in ('server_version_num', 'wal_level', 'max_wal_senders', 'max_connections', 'max_worker_processes',
                     'max_prepared_transactions', 'max_locks_per_transaction')`
    settings = Object.fromEntries(rows.map((r) => [r.name, r.setting]))
    if (settings.wal_level === 'minimal') return 'the test server runs with wal_level=minimal: it cannot stream to a replica'
    if (Number(settings.max_wal_senders) < 2) return 'the test server has max_wal_senders < 2: pg_basebackup and a standby need two'
    const [role] = await admin<{ ok: boolean }[]>`select rolsuper or rolreplication as ok from pg_roles where rolname = current_user`
    if (!role?.ok) return `the test server's user ${user} has neither SUPERUSER nor REPLICATION`
    try {
      const hba = await admin<{ n: number }[]>`
        select count(*)::int as n from pg_hba_file_rules
        where type like 'host%' and 'replication' = any(database) and error is null`
      if (!hba[0]?.n) {
        return `pg_hba.conf of the test server has no "host replication ..." line for ${host}: add "host replication all 127.0.0.1/32 trust" (or md5) and reload to run these tests`
      }
    } catch {
      // pg_hba_file_rules needs a superuser; pg_basebackup below reports a refusal itself.
    }
  } catch (err) {
    return `the test server cannot be asked (${String((err as Error).message ?? err)})`
  } finally {
    await admin.end()
  }
  const major = Math.floor(Number(settings.server_version_num) / 10000)
  const bin = `/usr/lib/postgresql/${major}/bin`
  if (!existsSync(join(bin, 'pg_basebackup')) || !existsSync(join(bin, 'pg_ctl'))) {
    const found = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').join(', ') : 'none'
    return `no PostgreSQL ${major} binaries in ${bin} (found: ${found}): pg_basebackup and pg_ctl of the server's major version are needed`
  }
  const asPostgres = process.getuid?.() === 0
  if (asPostgres && !(await run(['id', 'postgres'], false)).ok) return 'the tests run as root and there is no postgres OS user to run the standby as'

  const dir = mkdtempSync(join(tmpdir(), 'cs-standby-'))
  const data = join(dir, 'data')
  const standbyPort = freePort()
  const pgCtl = (args: string[]) => run([join(bin, 'pg_ctl'), '-D', data, ...args], asPostgres)
  let started = false
  const remove = async () => {
    if (started) await pgCtl(['-m', 'immediate', '-w', 'stop'])
    started = false
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    chmodSync(dir, 0o700)
    if (asPostgres) {
      const uid = Number((await run(['id', '-u', 'postgres'], false)).out)
      const gid = Number((await run(['id', '-g', 'postgres'], false)).out)
      chownSync(dir, uid, gid)
    }
    const backup = await run(
      [join(bin, 'pg_basebackup'), '-h', host, '-p', port, '-U', user, '-D', data, '-X', 'stream', '-R', '--checkpoint=fast', '--no-sync'],
      asPostgres,
    )
    if (!backup.ok) {
      await remove()
      return `pg_basebackup of the test server failed: ${backup.out}`
    }
    // Debian keeps postgresql.conf and pg_hba.conf outside the data folder: the standby gets its own. A hot standby needs
    // at least the primary's connection and worker limits.
    const conf = [
      `port = ${standbyPort}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${dir}'`,
      'hot_standby = on',
      `max_connections = ${settings.max_connections}`,
      `max_worker_processes = ${settings.max_worker_processes}`,
      `max_wal_senders = ${settings.max_wal_senders}`,
      `max_prepared_transactions = ${settings.max_prepared_transactions}`,
      `max_locks_per_transaction = ${settings.max_locks_per_transaction}`,
      'shared_buffers = 32MB',
      'fsync = off',
      'logging_collector = off',
      'ssl = off',
    ]
    const owner = asPostgres ? { uid: Number((await run(['id', '-u', 'postgres'], false)).out), gid: Number((await run(['id', '-g', 'postgres'], false)).out) } : null
    for (const [name, text] of [
      ['postgresql.conf', `${conf.join('\n')}\n`],
      ['pg_hba.conf', 'local all all trust\nhost all all 127.0.0.1/32 trust\n'],
      ['pg_ident.conf', ''],
    ] as const) {
      writeFileSync(join(data, name), text, { mode: 0o600 })
      if (owner) chownSync(join(data, name), owner.uid, owner.gid)
    }
    const start = await pgCtl(['-l', join(dir, 'standby.log'), '-w', '-t', '120', 'start'])
    if (!start.ok) {
      const log = await Bun.file(join(dir, 'standby.log')).text().catch(() => '')
      await remove()
      return `the standby did not start: ${start.out}\n${log.slice(-2000)}`
    }
    started = true
  } catch (err) {
    await remove()
    return `the standby could not be set up: ${String((err as Error).message ?? err)}`
  }

  const urlOf = (databaseUrl: string) => {
    const u = new URL(databaseUrl)
    u.hostname = '127.0.0.1'
    u.port = String(standbyPort)
    return u.toString()
  }
  return {
    port: standbyPort,
    urlOf,
    async query(text) {
      const sql = postgres(urlOf(serverUrl), { max: 1, onnotice: () => {} })
      try {
        return (await sql.unsafe(text)) as unknown as Record<string, unknown>[]
      } finally {
        await sql.end()
      }
    },
    async stop() {
      if (!started) return
      const r = await pgCtl(['-m', 'fast', '-w', 'stop'])
      if (!r.ok) throw new Error(`the standby did not stop: ${r.out}`)
      started = false
    },
    remove,
  }
}
