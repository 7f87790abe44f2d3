/**
 * `create --template astro <dir> --space <slug>`: scaffolds an Astro 5 site wired to a Space through
 * `@content-service/astro` — the loader over the Space's locales, a page per Story and locale, a component per blueprint
 * of the starter set (page, post, author, text_block: the blueprints of onboarding's sample content) — and writes its
 * `.env` (server, Space, a read token). With `--sample` the Space, when it has no Stories yet, gets that starter set
 * through the management API (the server has no endpoint writing onboarding's sample content into an existing Space;
 * `content-service seed --space <slug>` on the server writes the full set, in every locale, with a form and a datasource).
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Api } from './archive'

export const TEMPLATES = ['astro'] as const

/** The blueprints of onboarding's sample content (src/modules/onboarding/sample.ts), which the template renders. */
export const SAMPLE_BLUEPRINTS = [
  { name: 'text_block', display_name: 'Text block', is_root: false, is_nestable: true, schema: { text: { type: 'textarea', required: true } } },
  {
    name: 'page',
    display_name: 'Page',
    is_root: true,
    is_nestable: false,
    schema: { headline: { type: 'text', required: true, max_length: 200 }, lead: { type: 'textarea' }, body: { type: 'blocks', component_whitelist: ['text_block'] } },
  },
  {
    name: 'post',
    display_name: 'Blog post',
    is_root: true,
    is_nestable: false,
    schema: { headline: { type: 'text', required: true, max_length: 200 }, lead: { type: 'textarea' }, body: { type: 'markdown' }, tags: { type: 'tags' }, author: { type: 'text', translatable: false } },
  },
  { name: 'author', display_name: 'Author', is_root: true, is_nestable: false, schema: { headline: { type: 'text', required: true, translatable: false }, lead: { type: 'textarea' } } },
]

const doc = (...blocks: Record<string, unknown>[]) => ({ type: 'doc', blocks })

/** The sample Stories (the default locale only), parents first. */
const SAMPLE_STORIES = (space: string) => [
  {
    slug: 'home',
    name: `Welcome to ${space}`,
    content: doc({
      component: 'page',
      _uid: 'home',
      headline: `Welcome to ${space}`,
      lead: 'This home page is sample content: edit it, publish it, or delete it.',
      body: [{ component: 'text_block', _uid: 'intro', text: 'Every page of this site is a Story of the Space, rendered by a component per blueprint.' }],
    }),
  },
  { slug: 'blog', name: 'Blog', folder: true },
  {
    slug: 'hello-world',
    parent: 'blog',
    name: 'Hello, world',
    content: doc({ component: 'post', _uid: 'post', headline: 'Hello, world', lead: 'The first post of the sample blog.', body: 'A post is **markdown** text.', tags: ['sample', 'news'], author: 'Sample Author' }),
  },
  { slug: 'authors', name: 'Authors', folder: true },
  {
    slug: 'sample-author',
    parent: 'authors',
    name: 'Sample Author',
    content: doc({ component: 'author', _uid: 'author', headline: 'Sample Author', lead: 'Writes the sample posts of this Space.' }),
  },
]

const enc = encodeURIComponent

/** Writes the starter blueprints (created or left as they are) and Stories (published) into a Space without Stories. */
export async function writeSample(api: Api, space: string): Promise<{ components: string[]; stories: string[] }> {
  const sp = `/spaces/${enc(space)}`
  const existing = await api.call<{ data: unknown[] }>('GET', `${sp}/stories?per_page=1`)
  if (existing.data.length) throw Object.assign(new Error(`the Space ${space} already has Stories: --sample writes only into a Space without Stories`), { refused: true })
  const have = new Set((await api.call<{ data: { name: string }[] }>('GET', `${sp}/components`)).data.map((c) => c.name))
  const components: string[] = []
  for (const b of SAMPLE_BLUEPRINTS) {
    if (have.has(b.name)) continue
    await api.call('POST', `${sp}/components`, b)
    components.push(b.name)
  }
  const uuids = new Map<string, string>()
  const stories: string[] = []
  for (const s of SAMPLE_STORIES(space)) {
    const created = (
      await api.call<{ data: { uuid: string; full_path: string } }>('POST', `${sp}/stories`, {
        name: s.name,
        slug: s.slug,
        parent_uuid: s.parent ? uuids.get(s.parent) : undefined,
        ...(s.folder ? { is_folder: true } : { content: s.content }),
      })
    ).data
    uuids.set(s.slug, created.uuid)
    stories.push(created.full_path)
    if (!s.folder) await api.call('POST', `${sp}/stories/${created.uuid}/publish`)
  }
  return { components, stories }
}

export interface SiteOptions {
  server: string
  space: string
  token: string
  locales: string[]
  defaultLang: string
  name: string
}

/** The files of the Astro template, by path. */
export function astroTemplate(o: SiteOptions): Record<string, string> {
  const langs = [o.defaultLang, ...o.locales.filter((l) => l !== o.defaultLang)]
  return {
    'package.json': `${JSON.stringify(
      {
        name: o.name,
        private: true,
        type: 'module',
        scripts: { dev: 'astro dev', build: 'astro build', preview: 'astro preview', check: 'astro check' },
        dependencies: { '@content-service/astro': '^0.1.0', '@content-service/sdk': '^0.1.0', astro: '^5.18.2' },
      },
      null,
      2,
    )}\n`,
    '.env': `# Written by content-service-cli create. Keep it out of git (.gitignore lists it).\nCONTENT_SERVICE_URL=${o.server}\nCONTENT_SERVICE_SPACE=${o.space}\nCONTENT_SERVICE_TOKEN=${o.token}\n`,
    '.gitignore': '.astro/\ndist/\nnode_modules/\n.env\n',
    'tsconfig.json': `${JSON.stringify({ extends: 'astro/tsconfigs/strict', include: ['.astro/types.d.ts', '**/*'], exclude: ['dist'] }, null, 2)}\n`,
    'astro.config.mjs': `// The site's settings come from .env (written by content-service-cli create) or the environment.
import { existsSync, readFileSync } from 'node:fs'
import { defineConfig } from 'astro/config'
import contentService from '@content-service/astro'

if (existsSync('.env')) {
  for (const line of readFileSync('.env', 'utf8').split('\\n')) {
    const m = /^\\s*([A-Z_][A-Z0-9_]*)\\s*=\\s*(.*?)\\s*$/.exec(line)
    if (m && process.env[m[1]] === undefined) process.env[m[1]] = m[2]
  }
}

export default defineConfig({
  integrations: [
    contentService({
      baseUrl: process.env.CONTENT_SERVICE_URL,
      space: process.env.CONTENT_SERVICE_SPACE,
      token: process.env.CONTENT_SERVICE_TOKEN,
      // blueprint name → the component rendering its blocks (a blueprint without one fails the build, naming it)
      components: {
        page: 'src/components/Page.astro',
        post: 'src/components/Post.astro',
        author: 'src/components/Author.astro',
        text_block: 'src/components/TextBlock.astro',
      },
    }),
  ],
})
`,
    'src/content.config.ts': `import { defineCollection } from 'astro:content'
import { storyLoader } from '@content-service/astro'

// One entry per published Story and locale, id "<locale>/<full path>", synced incrementally on every build.
export const collections = {
  stories: defineCollection({ loader: storyLoader({ langs: ${JSON.stringify(langs)} }) }),
}
`,
    'src/pages/[...slug].astro': `---
import { getCollection } from 'astro:content'
import Blocks from '@content-service/astro/Blocks.astro'
import { editable } from '@content-service/astro'

export async function getStaticPaths() {
  const entries = await getCollection('stories')
  return entries.map((entry) => ({ params: { slug: entry.id }, props: { entry } }))
}

const story = Astro.props.entry.data
---
<html lang={story.locale}>
  <head><meta charset="utf-8" /><meta name="viewport" content="width=device-width" /><title>{story.name}</title></head>
  <body>
    <nav><a href="/">Home</a></nav>
    <main {...editable(story)}>
      <Blocks blocks={story.content.blocks} />
    </main>
  </body>
</html>
`,
    'src/pages/index.astro': `---
import { getCollection } from 'astro:content'

const entries = (await getCollection('stories')).sort((a, b) => a.id.localeCompare(b.id))
---
<html lang="${o.defaultLang}">
  <head><meta charset="utf-8" /><meta name="viewport" content="width=device-width" /><title>${o.space}</title></head>
  <body>
    <h1>${o.space}</h1>
    <ul>{entries.map((e) => <li><a href={\`/\${e.id}/\`}>{e.data.name}</a> <small>{e.data.locale}</small></li>)}</ul>
  </body>
</html>
`,
    'src/components/Page.astro': `---
import Blocks from '@content-service/astro/Blocks.astro'
import { editableField } from '@content-service/astro'

const { block, path } = Astro.props
---
<article>
  <h1 {...editableField(...path, 'headline')}>{block.headline}</h1>
  {block.lead && <p class="lead" {...editableField(...path, 'lead')}>{block.lead}</p>}
  <Blocks blocks={block.body} path={[...path, 'body']} />
</article>
`,
    'src/components/Post.astro': `---
import { editableField } from '@content-service/astro'

const { block, path } = Astro.props
---
<article>
  <h1 {...editableField(...path, 'headline')}>{block.headline}</h1>
  {block.lead && <p class="lead" {...editableField(...path, 'lead')}>{block.lead}</p>}
  {block.body && <div class="body" {...editableField(...path, 'body')}>{block.body}</div>}
  {block.author && <p class="author">{block.author}</p>}
  {block.tags?.length > 0 && <ul class="tags">{block.tags.map((t) => <li>{t}</li>)}</ul>}
</article>
`,
    'src/components/Author.astro': `---
import { editableField } from '@content-service/astro'

const { block, path } = Astro.props
---
<article class="author">
  <h1 {...editableField(...path, 'headline')}>{block.headline}</h1>
  {block.lead && <p {...editableField(...path, 'lead')}>{block.lead}</p>}
</article>
`,
    'src/components/TextBlock.astro': `---
import { editableField } from '@content-service/astro'

const { block, path } = Astro.props
---
<p {...editableField(...path, 'text')}>{block.text}</p>
`,
    'README.md': `# ${o.name}

An [Astro](https://astro.build) site showing the Space \`${o.space}\` of ${o.server}, made by
\`content-service-cli create --template astro\`.

\`\`\`sh
npm install
npm run dev     # http://localhost:4321
npm run build   # dist/: a page per published Story and locale
\`\`\`

\`.env\` holds the server, the Space and a read token (keep it out of git). Each blueprint is rendered by the component
\`astro.config.mjs\` maps it to (\`src/components/\`): add one there for each blueprint you add to the Space.
`,
  }
}

/** Writes the files under `dir`, which must not exist or be empty. */
export function writeSite(dir: string, files: Record<string, string>): string[] {
  if (existsSync(dir) && readdirSync(dir).length) throw new Error(`${dir} exists and is not empty`)
  const written: string[] = []
  for (const [path, text] of Object.entries(files)) {
    const file = join(dir, path)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, text, path === '.env' ? { mode: 0o600 } : undefined)
    written.push(path)
  }
  return written
}
