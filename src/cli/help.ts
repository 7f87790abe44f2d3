export const HELP = `content-service — a multi-tenant headless CMS in one executable

Usage:
  content-service [serve] [--port <n>] [--host <addr>] [--no-worker]
  content-service worker
  content-service migrate
  content-service reindex [--space <slug>]
  content-service seed --space <slug>
  content-service user create --email <e> --name <n> [--password-stdin] [--tenant <name>]
  content-service user set-password --email <e> [--password-stdin]
  content-service version
  content-service backup [--out <file>]
  content-service restore <file> [--force]
  content-service health [--live] [--url <base>]
  content-service assets migrate --to s3|postgres
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
  seed       Write the sample content (blueprints, published Stories in every locale, a form, a datasource)
             into an existing Space, as POST /v1/onboard with sample_content does.
  user create  Create a user and its tenant, whatever REGISTRATION says (the first admin of a closed service).
               --password-stdin  Read the password from standard input (else one is generated and printed once)
  user set-password  Set a user's password and sign out all their sessions (the operator's reset).
  version    Print the service version, release channel and database mode.
  backup     Write a consistent snapshot (database, asset bytes, the data folder's secret key) to one file,
             while the server keeps serving. See docs/operations.md.
  restore    Restore a backup into an empty DATA_DIR (or an empty Postgres database); --force replaces.
  health     Ask the local server's /v1/health/ready (or --live); exit 0 when it answers 200, else 1.
  assets migrate  Move asset bytes to the S3 bucket or back into Postgres (--to s3|postgres), with progress;
             run it again after a stop to continue.

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
  seed: `content-service seed --space <slug>

Write the onboarding sample content into an existing, live Space: the blueprints page, post, author and
text_block; a home page, a blog folder with two posts and an authors folder with one author, each in every locale
of the Space and published; the form "contact" and the datasource "site_facts". It goes through the same services
as the API, so the search index and caches of running instances follow (on Postgres). Fails (exit 1) for an unknown
Space, or one that has any of these names already. With the embedded database, stop the server first (one process
owns the data folder).

Options:
  --space <slug>  The Space to seed
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
  assets: `content-service assets migrate --to s3|postgres

Move every asset whose bytes are not in the named store into it, one asset at a time: the copy is checked
against the asset's SHA-256, then its row names the new store and the old copy goes (chunk rows at once, an
object through a durable job). Progress is printed as it goes. Stopped anywhere, every asset stays readable and
the next run continues with what is left. Needs S3_BUCKET, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY (and
S3_ENDPOINT for a store other than AWS S3); ASSET_STORE only chooses where new uploads go, so set it to the same
store for the servers. With Postgres (DATABASE_URL) the servers keep serving meanwhile; the embedded database is
owned by one process: stop the server first. See docs/operations.md.

Options:
  --to <store>  s3 or postgres
`,
  backup: `content-service backup [--out <file>]

Write a backup of everything the service stores to one .tar.gz file (default: content-service-backup-<UTC time>.tar.gz
in the current folder), mode 0600. The server keeps serving meanwhile.

Embedded database (DATA_DIR): a running server is asked for the snapshot through its control socket
(DATA_DIR/control.sock, reachable only by the service's user): it checkpoints and copies its data folder while no
statement runs, so the copy is one consistent state (it needs free space for that copy, in DATA_DIR/backup-staging,
deleted afterwards); compression runs after the locks are released. With no server running, the command opens the
folder itself. The file holds the database (asset bytes included) and DATA_DIR/secret.key; not the image variant cache.

Postgres (DATABASE_URL): runs pg_dump (custom format; install postgresql-client of your server's major version or
newer). Keep SERVICE_SECRET_KEY with your backups: webhook secrets are sealed with it.

Progress is shown on a terminal. Exit status 0 on success, 1 on failure.

Options:
  --out, -o <file>  Where to write the backup
`,
  restore: `content-service restore <file> [--force]

Restore a backup made by \`content-service backup\`. An embedded-database backup goes into DATA_DIR, which must be
empty or absent (--force empties it first; refused while a server runs on it). A Postgres backup goes into the database
at DATABASE_URL with pg_restore, which must have no tables (--force drops and replaces them). Then start the server:
pending migrations of a newer binary are applied at start.

Options:
  --force  Replace what DATA_DIR (or the database) holds
`,
  health: `content-service health [--live] [--url <base>]

Ask the server on this machine (http://127.0.0.1:PORT, or HOST when it is a specific address) for
GET /v1/health/ready — or /v1/health/live with --live — and exit 0 when it answers 200, 1 otherwise.
For container HEALTHCHECKs on images without curl.

Options:
  --live        Liveness instead of readiness
  --url <base>  Another base URL (e.g. http://127.0.0.1:9000)
`,
  version: `content-service version

Print the service version, the release channel (SERVICE_RELEASE_CHANNEL) and the database mode.
`,
}
