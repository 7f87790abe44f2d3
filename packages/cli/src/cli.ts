/**
 * content-service-cli: the entry. It parses the command line and loads only the command asked for (start-up stays
 * small); every command talks to a server through its public API (never its database).
 */
import { type Args, EXIT, UsageError } from './shared'

export const HELP: Record<string, string> = {
  '': `content-service-cli — Content Service from the command line

Usage: content-service-cli <command> [options]

Commands:
  login                 store a token for a server (mode 0600)
  logout                forget the token of a server
  whoami                who the token is, in which tenant
  spaces                the Spaces the token can see
  components pull       write a Space's component blueprints to a file
  components push       create or update blueprints in a Space from a file or another Space
  components diff       compare blueprints between Spaces, servers or a file
  types                 TypeScript types (and a validator) from a Space's blueprints
  stories pull|push     a Space's Stories as a folder of JSON files (+ manifest); push remaps uuids, resumes
  assets pull|push      assets and their bytes in that folder; push deduplicates by SHA-256
  datasources pull|push datasources (settings and entries) in that folder
  export                one archive of a Space: blueprints, Stories, assets, datasources, forms, segments
  import                restore an archive into an empty Space (any server), every uuid remapped
  create                scaffold a site (Astro) wired to a Space
  migrate create|run    content migrations: a function from a block to a block for one blueprint

Options everywhere:
  --server <url>        the server (default: CONTENT_SERVICE_URL, else the one logged in to last)
  --token <token>       a bearer token (default: CONTENT_SERVICE_TOKEN, else the stored one)
  --json                machine-readable output on stdout
  --help                help of a command

Exit codes: 0 ok, 1 differences (components diff), 2 usage, 3 not authenticated or forbidden, 4 not found,
5 refused by the server (conflict, validation), 6 server unreachable or failing.
Under CI (CI set) or without a terminal nothing is ever asked: a missing input is a usage error.`,
  login: `content-service-cli login --server <url> [--token <token> | --email <email> [--password <password>]]

Stores a token for the server in ~/.config/content-service/credentials.json (mode 0600; XDG_CONFIG_HOME is honoured),
one per server. With --email the password is read from --password, CONTENT_SERVICE_PASSWORD or, in a terminal, asked.`,
  logout: 'content-service-cli logout [--server <url>]\n\nForgets the stored token of the server.',
  whoami: 'content-service-cli whoami [--server <url>] [--json]\n\nThe user (or Space token), tenant and Spaces behind the token.',
  spaces: 'content-service-cli spaces [--json]\n\nThe Spaces the token can see: slug, name, role, locales.',
  components: `content-service-cli components <pull | push | diff>

  pull --space <slug> [--out components.json]
  push --space <slug> (--file components.json | --from-space <slug> [--from-server <url>]) [--dry-run]
  diff --space <slug> (--file components.json | --to-space <slug> [--to-server <url>])

push creates missing blueprints and updates changed ones (never deletes); --dry-run prints the plan only.
diff exits 1 when the two sides differ, 0 when they are equal.`,
  types: `content-service-cli types --space <slug> [--out content.d.ts] [--file components.json] [--watch]

Writes <out> (a type per blueprint, discriminated by \`component\`; RootBlock, ComponentName, ComponentMap,
StoryContent, Schema for createClient<Schema>()) and <out without .d.ts>.validate.js (+ .d.ts): the blueprints and
isValidContent/contentErrors (needs @content-service/sdk). --file reads blueprints from a pulled file instead of
the server; --watch regenerates whenever the Space's blueprints change (every 2 s).`,
}

const CONTENT_HELP = (kind: string, what: string) => `content-service-cli ${kind} <pull | push>

  pull --space <slug> [--dir content]
  push --space <slug> [--dir content] [--dry-run]

${what}
pull writes them into <dir> (a folder of JSON files) and records them in <dir>/manifest.json; what the Space no longer
has leaves the folder. push writes them into a Space (any server): every Story and asset uuid is remapped (Stories
matched by full path, assets by SHA-256), --dry-run lists what would change and writes nothing. The manifest records
each item a push finished, so a push that was interrupted continues where it stopped when run again, without
duplicates.`
HELP.stories = CONTENT_HELP(
  'stories',
  `Stories (folders too): <dir>/stories/<full path>.json, each translation's current draft and whether it is published.
push creates the missing ones (parents first), saves a translation only when it differs (no empty versions), rewrites
Story and asset uuids in content (asset, link, relation fields) and publishes again what was published. Variants
(segment × locale) go with their Story, matched to the target's audience segment of the same key; one whose segment
the target lacks is skipped and named (create the segment there, push again). Push the blueprints first
(components push) and the assets (assets push) to resolve asset fields.`,
)
HELP.assets = CONTENT_HELP(
  'assets',
  `Assets: <dir>/assets/<uuid>.json (file name, type, SHA-256, alt texts) and the bytes next to it (not downloaded again
when unchanged). push uploads only assets whose SHA-256 the Space does not have yet.`,
)
HELP.datasources = CONTENT_HELP(
  'datasources',
  `Datasources: <dir>/datasources/<key>.json, settings and entries. Secrets never travel (the server shows them masked):
a datasource push creates gets a new push secret (printed once) and its entries pushed; an existing one gets its
label and settings, its entries stay.`,
)

HELP.export = `content-service-cli export --space <slug> --out <file.json> [--versions current|all]

One JSON archive of the Space: its locales, component blueprints, assets (bytes and alt texts), every Story that is
not archived (folders included) with the current draft of each translation, whether it is published and its variants
(--versions all: every version too), the audience segments, the forms (no submissions) and the datasources with their
entries. Secrets are never in it.`
HELP.import = `content-service-cli import <file.json> --space <slug> [--state <file>] [--dry-run]

Restores an archive into an empty Space, on any server: missing locales are added, blueprints created or updated,
assets uploaded (an asset with the same SHA-256 already in the Space is reused), Stories created with new uuids —
every Story and asset uuid in content (asset, link and relation fields) rewritten to the new one — and those that were
published published again; segments, forms, datasources (entries included; a new push secret, printed once) and
variants restored, and with an archive of --versions all every version saved again, oldest first.
The progress is recorded after each item in <file.json>.import-state.json (or --state): an import that was
interrupted continues where it stopped when run again, without duplicates. A Space that already has Stories, or
segments, forms or datasources of the archive's keys, is refused (exit 5, naming them) unless it is the one an
interrupted import was writing to.`

HELP.create = `content-service-cli create [--template astro] <dir> --space <slug> [--sample] [--site-token <token>]

Scaffolds an Astro 5 site in <dir> (new or empty) wired to the Space with @content-service/astro: the loader over the
Space's locales, a page per Story and locale, a component per blueprint of the starter set (page, post, author,
text_block), and .env with CONTENT_SERVICE_URL, CONTENT_SERVICE_SPACE and CONTENT_SERVICE_TOKEN — a viewer Space token
made for the site (the caller must be an admin of the Space; else --site-token, else the CLI's own token is written).
--sample has the server write onboarding's sample content (blueprints, published Stories in every locale, a form, a
datasource) into the Space; a Space with Stories is refused (exit 5) and nothing is written.`

HELP.migrate = `content-service-cli migrate <create | run>

  create <name> --component <blueprint> [--dir migrations] [--ts]
  run <name> --space <slug> [--dir migrations] [--apply] [--publish] [--starts-with <path>]

create writes <dir>/<name>.mjs (type-checked through JSDoc; --ts writes .ts, which needs a runtime stripping types:
Node 22.18+/23.6+, Bun, Deno): export default {component, migrate(block, {story, lang})} returning the block as it
should be (null removes it). run applies it to every block of that blueprint (nested ones too) in every translation
of every Story. Runs are dry unless --apply: each changed translation is listed with its diff. With --apply each is
saved with expected_version_no (the version read), so a Story saved by someone else meanwhile is reported as a
conflict and not written (exit 5; run again); --publish publishes again what was published (and had no unpublished
changes before the run). Each translation is migrated once: <dir>/.<name>.state.json records what --apply wrote (per
server and Space), so a run interrupted and run again neither migrates twice nor forgets to publish.`

export function parseArgs(argv: string[]): Args {
  const positional: string[] = []
  const flags: Record<string, string | true> = {}
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') {
      positional.push(...argv.slice(i + 1))
      break
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=')
      if (eq !== -1) flags[a.slice(2, eq)] = a.slice(eq + 1)
      else if (i + 1 < argv.length && !argv[i + 1].startsWith('--') && !BOOLEAN.has(a.slice(2))) flags[a.slice(2)] = argv[++i]
      else flags[a.slice(2)] = true
    } else if (a === '-h') flags.help = true
    else positional.push(a)
  }
  return { positional, flags }
}

const BOOLEAN = new Set(['json', 'help', 'version', 'dry-run', 'watch', 'sample', 'publish', 'apply', 'ts'])


async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv)
  const [cmd = '', sub] = args.positional
  if (!cmd && args.flags.version) {
    process.stdout.write(args.flags.json ? `${JSON.stringify({ version: '0.1.0' })}\n` : '0.1.0\n')
    return EXIT.ok
  }
  if (!cmd || args.flags.help || cmd === 'help') {
    const topic = cmd === 'help' ? (sub ?? '') : cmd
    process.stdout.write(`${HELP[topic] ?? HELP['']}\n`)
    return topic in HELP || !cmd || cmd === 'help' ? EXIT.ok : EXIT.usage
  }
  if (!(cmd in HELP)) {
    process.stderr.write(`Unknown command "${cmd}". Run content-service-cli --help.\n`)
    return EXIT.usage
  }
  const { run } = await import('./commands')
  return run(cmd, args)
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (err) => {
    process.stderr.write(`${err?.message ?? err}\n`)
    process.exitCode = err instanceof UsageError ? EXIT.usage : 1
  },
)
