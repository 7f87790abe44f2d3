export const HELP = `content-service — a multi-tenant headless CMS in one executable

Usage:
  content-service [serve] [--port <n>] [--host <addr>] [--no-worker]
  content-service worker
  content-service migrate
  content-service reindex [--space <slug>]
  content-service user create --email <e> --name <n> [--password-stdin] [--tenant <name>]
  content-service user set-password --email <e> [--password-stdin]
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
  user create  Create a user and its tenant, whatever REGISTRATION says (the first admin of a closed service).
               --password-stdin  Read the password from standard input (else one is generated and printed once)
  user set-password  Set a user's password and sign out all their sessions (the operator's reset).
  version    Print the service version, release channel and database mode.

Storage: with DATABASE_URL set, Postgres through that URL; otherwise embedded PostgreSQL (PGlite) in
DATA_DIR (default ./data), created on first start. Every environment variable is listed in the README.
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
  user: `content-service user create --email <address> --name <name> [--password-stdin] [--tenant <name>]
content-service user set-password --email <address> [--password-stdin]

Create a user and a new tenant for it, as sign-up does, but whatever REGISTRATION says: the way to make the first
admin of a service whose registration is closed or first-user, from a script or a container entrypoint. It opens
the configured database (applying pending migrations); on the embedded database, stop the server first. The user
then logs in with POST /v1/auth/login and creates Spaces.

Options:
  --email <address>  The login e-mail address (unique, compared case-insensitively)
  --name <name>      The user's display name
  --password-stdin   Read the password from standard input (one trailing line ending is dropped; at least 8
                     characters), e.g. printf '%s' "$ADMIN_PASSWORD" | content-service user create ...
                     Without it a strong random password is generated and printed once on standard output.
  --tenant <name>    Name of the new tenant (default: "<name>'s workspace")

set-password sets the password of the user with that address (the operator's reset, e.g. when there is no
PUBLIC_URL for reset mails) and signs out every login session of the user; --password-stdin as above.

Exit status: 0 done; 1 refused (invalid input, address taken or unknown); 2 usage error.
`,
  version: `content-service version

Print the service version, the release channel (SERVICE_RELEASE_CHANNEL) and the database mode.
`,
}
