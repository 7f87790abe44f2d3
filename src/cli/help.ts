export const HELP = `content-service — a multi-tenant headless CMS in one executable

Usage:
  content-service [serve] [--port <n>] [--host <addr>] [--no-worker]
  content-service worker
  content-service migrate
  content-service reindex [--space <slug>]
  content-service version
  content-service --help | <command> --help

Commands:
  serve      Start the HTTP server (the default command). Applies pending migrations first.
               --port <n>    Port to listen on (default: PORT or 8080)
               --host <addr> Address to bind (default: HOST or 0.0.0.0)
               --no-worker   Serve HTTP only; leave jobs to \`content-service worker\` processes
  worker     Run the job workers only (webhook deliveries, schedules); needs DATABASE_URL.
  migrate    Apply pending database migrations and exit; shows each migration as it is applied.
  reindex    Ask every running instance to rebuild its search indexes from the database and wait for them.
               --space <slug> Only this Space (default: every Space)
  version    Print the service version, release channel and database mode.

Storage: with DATABASE_URL set, Postgres through that URL; otherwise embedded PostgreSQL (PGlite) in
DATA_DIR (default ./data), created on first start. One process at a time owns a data folder: a second one
exits with code 2 naming the PID that holds it. Every environment variable is listed in the README;
operating notes (locking, fsync, logs, exit codes) are in docs/operations.md.
`

export const COMMAND_HELP: Record<string, string> = {
  serve: `content-service serve [--port <n>] [--host <addr>] [--no-worker]

Start the HTTP server. Applies pending migrations first, prints the URL it listens on and whether it uses
embedded PGlite or Postgres. SIGTERM or SIGINT stops accepting connections, finishes in-flight requests and
closes the database.

Options:
  --port <n>     Port to listen on (default: PORT or 8080)
  --host <addr>  Address to bind (default: HOST or 0.0.0.0)
  --no-worker    Serve HTTP only: no webhook deliveries or scheduled jobs in this process
                 (run \`content-service worker\` beside it; SERVICE_WORKER_ENABLED=false does the same)
`,
  worker: `content-service worker

Run the job workers only: webhook deliveries, retries and scheduled jobs, claimed from the shared queue in Postgres
(FOR UPDATE SKIP LOCKED: any number of workers and servers share the work; none runs a job twice at once).
Needs DATABASE_URL: the embedded database belongs to the one \`serve\` process, which runs the workers itself.
SIGTERM lets attempts in flight finish, then exits.
`,
  migrate: `content-service migrate

Apply every pending migration (embedded in the executable) to the configured database and exit.
Safe to run while other instances start: migrations take a database lock and run in one transaction.
`,
  reindex: `content-service reindex [--space <slug>]

Rebuild the public search indexes in full. The indexes live in each running instance's memory, so this asks every
instance (through Postgres LISTEN/NOTIFY), shows each one's progress and returns when all have finished; it exits
non-zero when one failed or did not answer in time (3 when no instance is running). Needs DATABASE_URL: with the embedded database the server is the
only instance and holds the database, and a restart rebuilds every index at start-up.

Options:
  --space <slug>  Rebuild only this Space
`,
  version: `content-service version

Print the service version, the release channel (SERVICE_RELEASE_CHANNEL) and the database mode.
`,
}
