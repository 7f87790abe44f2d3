import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { exportSpace, type ImportState, importSpace, inTheWay, readArchive } from './archive'
import { type Kind, pull, push } from './content'
import { ApiError, connect } from './http'
import { createMigration, loadMigration, type MigratedTranslation, type MigrationState, runMigration } from './migrate'
import { astroTemplate, TEMPLATES, writeSample, writeSite } from './create'
import { type Args, EXIT, UsageError } from './shared'
import { type Blueprint, generateTypes, generateValidator } from './typegen'

// ---- credentials: one token per server, in a file only its owner can read ----

interface Credentials {
  current?: string
  servers: Record<string, { token: string; email?: string }>
}

const credentialsFile = () => join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'content-service', 'credentials.json')

function readCredentials(): Credentials {
  try {
    return JSON.parse(readFileSync(credentialsFile(), 'utf8')) as Credentials
  } catch {
    return { servers: {} }
  }
}

function writeCredentials(c: Credentials) {
  const file = credentialsFile()
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  writeFileSync(file, `${JSON.stringify(c, null, 2)}\n`, { mode: 0o600 })
  chmodSync(file, 0o600)
}

const normalizeServer = (s: string) => {
  let u: URL
  try {
    u = new URL(s)
  } catch {
    throw new UsageError(`--server must be a URL (http:// or https://), not "${s}"`)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError('--server must be an http(s) URL')
  return u.origin
}

// ---- the API ----

interface Target {
  server: string
  token: string | null
}

function target(args: Args, serverFlag = 'server', tokenFlag = 'token'): Target {
  const c = readCredentials()
  const given = args.flags[serverFlag]
  const server = typeof given === 'string' ? normalizeServer(given) : process.env.CONTENT_SERVICE_URL ? normalizeServer(process.env.CONTENT_SERVICE_URL) : c.current
  if (!server) throw new UsageError('No server: pass --server <url>, set CONTENT_SERVICE_URL, or log in first.')
  const tok = args.flags[tokenFlag]
  const token = typeof tok === 'string' ? tok : (process.env.CONTENT_SERVICE_TOKEN ?? c.servers[server]?.token ?? null)
  return { server, token }
}

/** One call through the SDK (src/http.ts). */
const api = <T>(t: Target, method: string, path: string, body?: unknown): Promise<T> => connect(t.server, t.token).call<T>(method, path, body)

const apiOf = (t: Target) => connect(t.server, t.token)

function exitOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT.usage
  if ((err as { refused?: boolean }).refused) return EXIT.refused
  if (!(err instanceof ApiError) && typeof (err as { status?: unknown }).status !== 'number') return 1
  if (!(err instanceof ApiError)) err = new ApiError((err as Error).message, (err as { status: number }).status, (err as { code?: string }).code ?? 'http_error')
  if (!(err instanceof ApiError)) return 1
  if (err.status === 401 || err.status === 403) return EXIT.auth
  if (err.status === 404) return EXIT.notFound
  if (err.status === 409 || err.status === 422) return EXIT.refused
  return EXIT.unavailable
}

// ---- output ----

const isCi = () => !!process.env.CI && process.env.CI !== 'false' && process.env.CI !== '0'

function out(args: Args, json: unknown, human: string) {
  process.stdout.write(args.flags.json ? `${JSON.stringify(json, null, 2)}\n` : `${human}\n`)
}

/** `push: stories 12/340` → `push: stories [███░░░…] 12/340` (a bar wherever the line counts `n/total`). */
export function progressLine(text: string, width = 20): string {
  const m = /(\d+)\/(\d+)/.exec(text)
  if (!m) return text
  const [n, total] = [Number(m[1]), Number(m[2])]
  const filled = total ? Math.round((Math.min(n, total) / total) * width) : width
  return `${text.slice(0, m.index)}[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${text.slice(m.index)}`
}

/** Progress bars on stderr, for people: never with --json, never without a terminal; one line, redrawn. */
function progress(args: Args, text: string) {
  if (args.flags.json || !process.stderr.isTTY) return
  const line = progressLine(text)
  process.stderr.write(`\r\x1b[2K${line.slice(0, Math.max(20, (process.stderr.columns || 80) - 1))}`)
}
const progressDone = (args: Args) => progress(args, '')

function flag(args: Args, name: string, required = true): string | undefined {
  const v = args.flags[name]
  if (typeof v === 'string' && v) return v
  if (required) throw new UsageError(`--${name} <value> is required. See --help.`)
  return undefined
}

async function ask(question: string, hidden: boolean): Promise<string> {
  if (isCi() || !process.stdin.isTTY) throw new UsageError(`${question.replace(/: $/, '')} is needed, and nothing is asked under CI or without a terminal: pass it as a flag.`)
  const { createInterface } = await import('node:readline')
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true })
  if (hidden) (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => void (s.includes(question) && process.stderr.write(s))
  return new Promise((resolve) =>
    rl.question(question, (a) => {
      rl.close()
      if (hidden) process.stderr.write('\n')
      resolve(a)
    }),
  )
}

// ---- blueprints ----

type Component = Blueprint & { display_name: string }

/** A blueprint as compared and pushed: no timestamps; fields in their order. */
const normalized = (c: Component) => ({ name: c.name, display_name: c.display_name, is_root: c.is_root, is_nestable: c.is_nestable, schema: c.schema })

async function componentsOf(t: Target, space: string): Promise<Component[]> {
  const r = await api<{ data: Component[] }>(t, 'GET', `/spaces/${encodeURIComponent(space)}/components`)
  return r.data.map(normalized).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

function readComponentsFile(file: string): Component[] {
  let parsed: { components?: Component[] }
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new UsageError(`${file}: not a components file (${(err as Error).message})`)
  }
  if (!Array.isArray(parsed.components)) throw new UsageError(`${file}: has no "components" list`)
  return parsed.components.map(normalized)
}

export interface ComponentChange {
  name: string
  change: 'added' | 'removed' | 'changed'
  /** What differs, for `changed`. */
  fields?: string[]
}

/** What would make `to` like `from`: added (only in from), changed, removed (only in to; push never deletes). */
export function diffComponents(from: Component[], to: Component[]): ComponentChange[] {
  const target = new Map(to.map((c) => [c.name, c]))
  const out: ComponentChange[] = []
  for (const c of from) {
    const other = target.get(c.name)
    if (!other) {
      out.push({ name: c.name, change: 'added' })
      continue
    }
    const fields: string[] = []
    for (const k of ['display_name', 'is_root', 'is_nestable'] as const) if (c[k] !== other[k]) fields.push(k)
    const keys = new Set([...Object.keys(c.schema), ...Object.keys(other.schema)])
    for (const f of keys) if (JSON.stringify(c.schema[f] ?? null) !== JSON.stringify(other.schema[f] ?? null)) fields.push(`schema.${f}`)
    if (JSON.stringify(Object.keys(c.schema)) !== JSON.stringify(Object.keys(other.schema)) && !fields.some((f) => f.startsWith('schema.'))) fields.push('field order')
    if (fields.length) out.push({ name: c.name, change: 'changed', fields })
  }
  const names = new Set(from.map((c) => c.name))
  for (const c of to) if (!names.has(c.name)) out.push({ name: c.name, change: 'removed' })
  return out
}

const describeChanges = (changes: ComponentChange[]) =>
  changes.length
    ? changes.map((c) => `${c.change === 'added' ? '+' : c.change === 'removed' ? '-' : '~'} ${c.name}${c.fields ? ` (${c.fields.join(', ')})` : ''}`).join('\n')
    : 'No differences.'

/** The blueprints of a source: a file (--file), another Space and server (--<prefix>space, --<prefix>server). */
async function source(args: Args, prefix: 'from' | 'to'): Promise<{ components: Component[]; label: string }> {
  const file = flag(args, 'file', false)
  if (file) return { components: readComponentsFile(file), label: file }
  const space = flag(args, `${prefix}-space`, false)
  if (!space) throw new UsageError(`--file <file> or --${prefix}-space <slug> is required. See --help.`)
  const t = args.flags[`${prefix}-server`] ? target(args, `${prefix}-server`, `${prefix}-token`) : target(args)
  return { components: await componentsOf(t, space), label: `${t.server} ${space}` }
}

// ---- commands ----

const commands: Record<string, (args: Args) => Promise<number>> = {
  async login(args) {
    const given = flag(args, 'server', false) ?? process.env.CONTENT_SERVICE_URL
    if (!given) throw new UsageError('--server <url> is required.')
    const server = normalizeServer(given)
    let token = flag(args, 'token', false) ?? null
    let email: string | undefined
    if (!token) {
      email = flag(args, 'email', false) ?? (await ask('E-mail: ', false))
      const password = flag(args, 'password', false) ?? process.env.CONTENT_SERVICE_PASSWORD ?? (await ask('Password: ', true))
      token = (await api<{ data: { token: string } }>({ server, token: null }, 'POST', '/auth/login', { email, password })).data.token
    }
    const who = await api<{ data: WhoAmI }>({ server, token }, 'GET', '/whoami')
    const c = readCredentials()
    c.servers[server] = { token, ...(who.data.user ? { email: who.data.user.email } : {}) }
    c.current = server
    writeCredentials(c)
    out(args, { server, user: who.data.user, tenant: who.data.tenant, credentials: credentialsFile() }, `Logged in to ${server} as ${who.data.user?.email ?? 'a Space token'}.`)
    return EXIT.ok
  },

  async logout(args) {
    const c = readCredentials()
    const server = flag(args, 'server', false) ? normalizeServer(flag(args, 'server')!) : c.current
    const had = !!(server && c.servers[server])
    if (server) delete c.servers[server]
    if (c.current === server) c.current = Object.keys(c.servers)[0]
    writeCredentials(c)
    out(args, { server, removed: had }, had ? `Logged out of ${server}.` : 'Nothing to forget.')
    return EXIT.ok
  },

  async whoami(args) {
    const t = target(args)
    if (!t.token) throw new ApiError('Not logged in: run content-service-cli login.', 401, 'unauthorized')
    const { data } = await api<{ data: WhoAmI }>(t, 'GET', '/whoami')
    out(args, { server: t.server, ...data }, `${data.user ? `${data.user.name} <${data.user.email}>` : 'A Space token'} in ${data.tenant.name} on ${t.server}`)
    return EXIT.ok
  },

  async spaces(args) {
    const t = target(args)
    const { data } = await api<{ data: { slug: string; name: string; role: string; locales: string[] }[] }>(t, 'GET', '/spaces')
    out(args, data, data.length ? data.map((s) => `${s.slug.padEnd(24)} ${s.role.padEnd(7)} ${s.locales.join(',').padEnd(16)} ${s.name}`).join('\n') : 'No Spaces.')
    return EXIT.ok
  },

  async components(args) {
    const sub = args.positional[1]
    if (sub === 'pull') {
      const space = flag(args, 'space')!
      const t = target(args)
      const components = await componentsOf(t, space)
      const file = flag(args, 'out', false) ?? 'components.json'
      writeFileSync(file, `${JSON.stringify({ components }, null, 2)}\n`)
      out(args, { file, count: components.length }, `Wrote ${components.length} blueprints of ${space} to ${file}.`)
      return EXIT.ok
    }
    if (sub === 'diff') {
      const space = flag(args, 'space')!
      const here = await componentsOf(target(args), space)
      const other = await source(args, 'to')
      // What would make `space` like the other side.
      const changes = diffComponents(other.components, here)
      out(args, { changes }, describeChanges(changes))
      return changes.length ? EXIT.different : EXIT.ok
    }
    if (sub === 'push') {
      const space = flag(args, 'space')!
      const t = target(args)
      const from = await source(args, 'from')
      const current = await componentsOf(t, space)
      const plan = diffComponents(from.components, current).filter((c) => c.change !== 'removed')
      if (args.flags['dry-run']) {
        out(args, { dry_run: true, changes: plan }, `Would push to ${space}:\n${describeChanges(plan)}`)
        return EXIT.ok
      }
      const byName = new Map(from.components.map((c) => [c.name, c]))
      // A blocks field's whitelist must name blueprints the Space has, and it may name one this push creates: new
      // blueprints are created first without their whitelists, then every pushed blueprint is saved whole.
      const added = plan.filter((c) => c.change === 'added')
      const withoutWhitelists = (body: Record<string, unknown>) => ({
        ...body,
        schema: Object.fromEntries(
          Object.entries((body.schema ?? {}) as Record<string, Record<string, unknown>>).map(([k, f]) => {
            if (f?.type !== 'blocks') return [k, f]
            const { component_whitelist: _, ...rest } = f
            return [k, rest]
          }),
        ),
      })
      const steps = added.length + plan.length
      let n = 0
      const path = `/spaces/${encodeURIComponent(space)}/components`
      for (const c of added) {
        progress(args, `Pushing ${++n}/${steps}: ${c.name}`)
        await api(t, 'POST', path, withoutWhitelists(normalized(byName.get(c.name)!) as Record<string, unknown>))
      }
      for (const c of plan) {
        progress(args, `Pushing ${++n}/${steps}: ${c.name}`)
        await api(t, 'PUT', `${path}/${encodeURIComponent(c.name)}`, normalized(byName.get(c.name)!))
      }
      progressDone(args)
      out(args, { changes: plan }, plan.length ? `Pushed to ${space}:\n${describeChanges(plan)}` : `${space} is up to date.`)
      return EXIT.ok
    }
    throw new UsageError('components: pull, push or diff. See content-service-cli components --help.')
  },

  async export(args) {
    const space = flag(args, 'space')!
    const file = flag(args, 'out')!
    const versions = flag(args, 'versions', false) ?? 'current'
    if (versions !== 'all' && versions !== 'current') throw new UsageError('--versions: all or current')
    const t = target(args)
    const archive = await exportSpace(apiOf(t), space, (s) => progress(args, `export: ${s}`), { versions })
    progressDone(args)
    writeFileSync(file, JSON.stringify(archive))
    const summary = {
      file,
      versions,
      components: archive.components.length,
      assets: archive.assets.length,
      stories: archive.stories.length,
      story_versions: archive.stories.reduce((n, s) => n + (s.versions?.length ?? 0), 0),
      variants: archive.stories.reduce((n, s) => n + (s.variants?.length ?? 0), 0),
      segments: archive.segments?.length ?? 0,
      forms: archive.forms?.length ?? 0,
      datasources: archive.datasources?.length ?? 0,
      locales: archive.locales,
    }
    out(
      args,
      summary,
      `Wrote ${file}: ${summary.components} blueprints, ${summary.assets} assets, ${summary.stories} Stories${versions === 'all' ? ` (${summary.story_versions} versions)` : ''}, ${summary.variants} variants, ${summary.segments} segments, ${summary.forms} forms, ${summary.datasources} datasources (${archive.locales.join(', ')}).`,
    )
    return EXIT.ok
  },

  async import(args) {
    const file = args.positional[1]
    if (!file) throw new UsageError('import <file> --space <slug>: the archive file is required.')
    const space = flag(args, 'space')!
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (err) {
      throw new UsageError(`${file}: ${(err as Error).message}`)
    }
    let archive: ReturnType<typeof readArchive>
    try {
      archive = readArchive(text)
    } catch (err) {
      throw new UsageError(`${file}: ${(err as Error).message}`)
    }
    const t = target(args)
    // The progress, after each item (per target Space): an interrupted import run again continues where it stopped.
    const stateFile = flag(args, 'state', false) ?? `${file}.import-state.json`
    const digest = createHash('sha256').update(text).digest('hex')
    let stored: ImportStateFile = { format: 'content-service-import-state', archive_sha256: digest, targets: {} }
    if (existsSync(stateFile)) {
      try {
        stored = JSON.parse(readFileSync(stateFile, 'utf8'))
      } catch (err) {
        throw new UsageError(`${stateFile}: ${(err as Error).message}`)
      }
      if (stored?.format !== 'content-service-import-state') throw new UsageError(`${stateFile} is not an import state file`)
      if (stored.archive_sha256 !== digest) throw new UsageError(`${stateFile} records the import of another archive: pass --state <another file>`)
    }
    const key = `${t.server} ${space}`
    const before = stored.targets[key]
    if (args.flags['dry-run']) {
      // What a run would do: continue an interrupted import, or start one — unless something is in the way.
      const resuming = !!before && !before.finished_at
      const blocking = resuming ? [] : await inTheWay(apiOf(t), space, archive)
      const summary = {
        dry_run: true,
        resume: resuming,
        in_the_way: blocking,
        components: archive.components.length,
        assets: archive.assets.length,
        stories: archive.stories.length,
        segments: archive.segments?.length ?? 0,
        forms: archive.forms?.length ?? 0,
        datasources: archive.datasources?.length ?? 0,
      }
      const what = `${summary.components} blueprints, ${summary.assets} assets, ${summary.stories} Stories, ${summary.segments} segments, ${summary.forms} forms and ${summary.datasources} datasources`
      out(
        args,
        summary,
        blocking.length
          ? `Would be refused: ${space} already has ${blocking.join('; ')}.`
          : `Would ${resuming ? `continue the interrupted import (${before!.done.stories.length} Stories done) of` : 'import'} ${what} into ${space}.`,
      )
      return blocking.length ? EXIT.refused : EXIT.ok
    }
    const save = (st: ImportState) => {
      stored.targets[key] = st
      const tmp = `${stateFile}.${process.pid}`
      writeFileSync(tmp, `${JSON.stringify(stored, null, 2)}\n`)
      renameSync(tmp, stateFile)
    }
    let r: Awaited<ReturnType<typeof importSpace>>
    try {
      r = await importSpace(apiOf(t), space, archive, (s) => progress(args, `import: ${s}`), { state: before, save })
    } catch (err) {
      if ((err as { refused?: boolean }).refused) {
        const note = before?.finished_at ? ` This archive was imported into it already (finished ${before.finished_at}, ${stateFile}).` : ''
        throw new ApiError(`${(err as Error).message}.${note}`, 409, 'not_empty')
      }
      progressDone(args)
      if (existsSync(stateFile)) process.stderr.write(`Interrupted: the progress is in ${stateFile}; run the same command again to continue.\n`)
      throw err
    }
    progressDone(args)
    out(
      args,
      r,
      [
        `${r.resumed ? `Continued the interrupted import (${r.already_done} Stories were done). ` : ''}Imported into ${space}: ${r.components} blueprints, ${r.assets.uploaded} assets uploaded (${r.assets.reused} reused), ${r.stories} Stories (${r.published} published${r.versions ? `, ${r.versions} versions replayed` : ''}), ${r.variants} variants, ${r.segments} segments, ${r.forms} forms, ${r.datasources} datasources.`,
        ...Object.entries(r.secrets).map(([k, v]) => `Push secret of the datasource ${k} (shown once): ${v}`),
        ...r.warnings.map((w) => `warning: ${w}`),
      ].join('\n'),
    )
    return EXIT.ok
  },

  stories: (args) => contentCommand('stories', args),
  assets: (args) => contentCommand('assets', args),
  datasources: (args) => contentCommand('datasources', args),

  async create(args) {
    const template = flag(args, 'template', false) ?? 'astro'
    if (!(TEMPLATES as readonly string[]).includes(template)) throw new UsageError(`--template: one of ${TEMPLATES.join(', ')}`)
    const dir = args.positional[1]
    if (!dir) throw new UsageError('create --template astro <dir> --space <slug>: the folder is required.')
    const space = flag(args, 'space')!
    const t = target(args)
    if (existsSync(dir) && readdirSync(dir).length) throw new UsageError(`${dir} exists and is not empty.`)
    const sp = `/spaces/${encodeURIComponent(space)}`
    const info = (await api<{ data: { default_lang?: string } }>(t, 'GET', sp)).data
    const locales = ((await api<{ data: unknown[] }>(t, 'GET', `${sp}/locales`)).data ?? []).map((l) => (typeof l === 'string' ? l : (l as { code: string }).code))
    const defaultLang = info.default_lang ?? locales[0] ?? 'en'
    let sample: { components: string[]; stories: string[] } | null = null
    if (args.flags.sample) {
      sample = await writeSample(apiOf(t), space)
    }
    // The site reads with a Space token of the viewer role (made here when the caller is an admin of the Space), never
    // with the caller's own token; --site-token gives one made elsewhere.
    let siteToken = flag(args, 'site-token', false)
    let tokenKind = 'given'
    if (!siteToken) {
      try {
        siteToken = (await api<{ data: { token: string } }>(t, 'POST', `${sp}/tokens`, { name: `astro site ${basename(dir)}`.slice(0, 100), role: 'viewer' })).data.token
        tokenKind = 'space token (viewer)'
      } catch (err) {
        if (!(err instanceof ApiError) || (err.status !== 403 && err.status !== 401) || !t.token) throw err
        siteToken = t.token
        tokenKind = 'the CLI token (not an admin of the Space: pass --site-token <viewer token> to use a Space token)'
      }
    }
    const files = writeSite(dir, astroTemplate({ server: t.server, space, token: siteToken!, locales, defaultLang, name: basename(dir).toLowerCase().replace(/[^a-z0-9._-]+/g, '-') || 'site' }))
    out(
      args,
      { dir, template, space, server: t.server, locales: [defaultLang, ...locales.filter((l) => l !== defaultLang)], token: tokenKind, files, sample },
      `Created ${dir} (Astro) for the Space ${space} on ${t.server}; .env holds ${tokenKind}.${sample ? `\nSample content: ${sample.stories.join(', ')} (published).` : ''}\nNext: cd ${dir} && npm install && npm run dev`,
    )
    return EXIT.ok
  },

  async migrate(args) {
    const sub = args.positional[1]
    const name = args.positional[2]
    const dir = flag(args, 'dir', false) ?? 'migrations'
    if (sub === 'create') {
      if (!name) throw new UsageError('migrate create <name> --component <blueprint>: the name is required.')
      const component = flag(args, 'component')!
      let file: string
      try {
        file = createMigration(dir, name, component, !!args.flags.ts)
      } catch (err) {
        throw new UsageError((err as Error).message)
      }
      out(args, { file, component }, `Wrote ${file}: edit migrate(block), then run content-service-cli migrate run ${name} --space <slug>.`)
      return EXIT.ok
    }
    if (sub === 'run') {
      if (!name) throw new UsageError('migrate run <name> --space <slug>: the name is required.')
      const space = flag(args, 'space')!
      if (args.flags.apply && args.flags['dry-run']) throw new UsageError('--apply and --dry-run exclude each other.')
      let loaded: Awaited<ReturnType<typeof loadMigration>>
      try {
        loaded = await loadMigration(dir, name)
      } catch (err) {
        throw new UsageError((err as Error).message)
      }
      const t = target(args)
      const applying = !!args.flags.apply
      // What runs of this migration wrote, per target: a translation is migrated once, even when a run was interrupted.
      const stateFile = join(dir, `.${name}.state.json`)
      let stored: { format: 'content-service-migration-state'; targets: Record<string, MigrationState> } = { format: 'content-service-migration-state', targets: {} }
      if (existsSync(stateFile)) {
        try {
          stored = JSON.parse(readFileSync(stateFile, 'utf8'))
        } catch (err) {
          throw new UsageError(`${stateFile}: ${(err as Error).message}`)
        }
        if (stored?.format !== 'content-service-migration-state') throw new UsageError(`${stateFile} is not a migration state file`)
      }
      const key = `${t.server} ${space}`
      const results = await runMigration(apiOf(t), space, loaded.migration, {
        apply: applying,
        publish: !!args.flags.publish,
        startsWith: flag(args, 'starts-with', false),
        onProgress: (s) => progress(args, `migrate: ${s}`),
        state: stored.targets[key],
        save: (st) => {
          stored.targets[key] = st
          const tmp = `${stateFile}.${process.pid}`
          writeFileSync(tmp, `${JSON.stringify(stored, null, 2)}\n`)
          renameSync(tmp, stateFile)
        },
      })
      progressDone(args)
      const count = (r: MigratedTranslation['result']) => results.filter((x) => x.result === r).length
      const summary = {
        dry_run: !applying,
        migration: loaded.file,
        component: loaded.migration.component,
        translations: results.length,
        changed: count('changed'),
        saved: count('saved'),
        unchanged: count('unchanged'),
        done: count('done'),
        conflicts: count('conflict'),
        failed: count('failed'),
        published: results.filter((r) => r.published).length,
      }
      const listed = results.filter((r) => r.result !== 'unchanged' && r.result !== 'done')
      const human = listed
        .map((r) => {
          const head = `${r.result === 'changed' ? (applying ? 'changed' : 'would change') : r.result} ${r.full_path} [${r.lang}]${r.published ? ' (published)' : ''}${r.error ? `: ${r.error}` : ''}`
          return [head, ...r.diff.map((d) => `  ${d}`)].join('\n')
        })
      human.push(
        applying
          ? `Saved ${summary.saved} translations (${summary.published} published), ${summary.conflicts} conflicts (someone saved meanwhile: not written, run again), ${summary.failed} failed.`
          : `Dry run: ${summary.changed} translations would change. Run again with --apply to save them.`,
        ...(summary.done ? [`${summary.done} translations were migrated by an earlier run (not again).`] : []),
      )
      out(args, { ...summary, stories: listed }, human.join('\n'))
      return summary.conflicts || summary.failed ? EXIT.refused : EXIT.ok
    }
    throw new UsageError('migrate: create or run. See content-service-cli migrate --help.')
  },

  async types(args) {
    const outFile = flag(args, 'out', false) ?? 'content.d.ts'
    if (!outFile.endsWith('.d.ts')) throw new UsageError('--out must end in .d.ts')
    const file = flag(args, 'file', false)
    const space = file ? undefined : flag(args, 'space')
    const t = file ? null : target(args)
    const load = async () => (file ? readComponentsFile(file) : await componentsOf(t!, space!))
    const write = (components: Component[]) => {
      const base = outFile.slice(0, -'.d.ts'.length)
      const types = generateTypes(components, space ? `the Space "${space}"` : file)
      const validator = generateValidator(components, `./${basename(base)}`)
      mkdirSync(dirname(outFile) || '.', { recursive: true })
      writeFileSync(outFile, types)
      writeFileSync(`${base}.validate.js`, validator.js)
      writeFileSync(`${base}.validate.d.ts`, validator.dts)
      return [outFile, `${base}.validate.js`, `${base}.validate.d.ts`]
    }
    let components = await load()
    const files = write(components)
    out(args, { files, components: components.length }, `Wrote ${files.join(', ')} (${components.length} blueprints).`)
    if (!args.flags.watch) return EXIT.ok
    let last = JSON.stringify(components)
    for (;;) {
      await new Promise((r) => setTimeout(r, 2000))
      try {
        components = await load()
      } catch (err) {
        process.stderr.write(`types --watch: ${(err as Error).message}\n`)
        continue
      }
      const now = JSON.stringify(components)
      if (now === last) continue
      last = now
      write(components)
      out(args, { files, components: components.length, changed: true }, `Blueprints changed: wrote ${files.join(', ')}.`)
    }
  },
}

/** `<kind> pull | push`: a folder of JSON files plus a manifest (src/content.ts). */
async function contentCommand(kind: Kind, args: Args): Promise<number> {
  const sub = args.positional[1]
  if (sub !== 'pull' && sub !== 'push') throw new UsageError(`${kind}: pull or push. See content-service-cli ${kind} --help.`)
  const space = flag(args, 'space')!
  const dir = flag(args, 'dir', false) ?? 'content'
  const t = target(args)
  const usage = (err: unknown) => {
    if ((err as { usage?: boolean }).usage || err instanceof SyntaxError) throw new UsageError((err as Error).message)
    throw err
  }
  if (sub === 'pull') {
    const r = await pull(apiOf(t), space, kind, dir, (s) => progress(args, `pull: ${s}`)).catch(usage)
    progressDone(args)
    out(args, r, `Wrote ${r.count} ${kind} of ${space} to ${dir}${kind === 'assets' ? ` (${r.fetched} downloaded)` : ''}${r.removed ? `, removed ${r.removed} no longer there` : ''}.`)
    return EXIT.ok
  }
  const dryRun = !!args.flags['dry-run']
  const r = await push(apiOf(t), space, kind, dir, { dryRun, onProgress: (s) => progress(args, `push: ${s}`) }).catch(usage)
  progressDone(args)
  const count = (c: string) => r.changes.filter((x) => x.change === c && !x.variant).length
  const variants = (c: string) => r.changes.filter((x) => x.change === c && x.variant).length
  const summary = {
    ...r,
    created: count('create'),
    updated: count('update'),
    uploaded: count('upload'),
    reused: count('reuse'),
    unchanged: count('unchanged'),
    published: r.changes.filter((x) => x.published).length,
    ...(r.changes.some((x) => x.variant) ? { variants: { created: variants('create'), updated: variants('update'), unchanged: variants('unchanged'), skipped: variants('skip') } } : {}),
  }
  const verb = (c: string) => (dryRun ? `would ${c}` : c === 'create' ? 'created' : c === 'update' ? 'updated' : c === 'upload' ? 'uploaded' : c === 'reuse' ? 'reused' : c === 'skip' ? 'skipped' : c)
  const lines = r.changes.filter((c) => c.change !== 'unchanged').map((c) => `${verb(c.change)} ${c.item}${c.published ? (dryRun ? ' and publish' : ' (published)') : ''}`)
  lines.push(
    `${dryRun ? 'Dry run: nothing written. ' : ''}${kind} → ${space}: ${summary.created} created, ${summary.updated} updated${kind === 'assets' ? `, ${summary.uploaded} uploaded, ${summary.reused} reused (same SHA-256)` : ''}, ${summary.unchanged} unchanged${summary.variants ? `; variants: ${summary.variants.created} created, ${summary.variants.updated} updated, ${summary.variants.unchanged} unchanged, ${summary.variants.skipped} skipped (no such segment)` : ''}.`,
    ...Object.entries(r.secrets).map(([k, v]) => `Push secret of the datasource ${k} (shown once): ${v}`),
    ...r.warnings.map((w) => `warning: ${w}`),
  )
  out(args, summary, lines.join('\n'))
  return EXIT.ok
}

interface ImportStateFile {
  format: 'content-service-import-state'
  archive_sha256: string
  /** `<server> <space>` → the progress of the import there */
  targets: Record<string, ImportState>
}

interface WhoAmI {
  user: { id: number; email: string; name: string } | null
  tenant: { id: number; name: string }
  spaces?: unknown
}

export async function run(cmd: string, args: Args): Promise<number> {
  try {
    return await commands[cmd](args)
  } catch (err) {
    const code = exitOf(err)
    const message = (err as Error).message
    if (args.flags.json) {
      const e = err as Partial<ApiError>
      process.stdout.write(`${JSON.stringify({ error: e.code ?? (err instanceof UsageError ? 'usage' : 'error'), message, status: e.status, errors: e.errors }, null, 2)}\n`)
    }
    process.stderr.write(`${message}${err instanceof ApiError && err.errors ? `\n${JSON.stringify(err.errors)}` : ''}\n`)
    return code
  }
}


