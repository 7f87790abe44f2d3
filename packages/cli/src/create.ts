/**
 * `create --template astro <dir> --space <slug>`: scaffolds an Astro 5 site wired to a Space through
 * `@content-service/astro` — the loader over the Space's locales, a page per Story and locale, a component per blueprint
 * of the starter set (page, post, author, text_block: the blueprints of onboarding's sample content) — and writes its
 * `.env` (server, Space, a read token). With `--sample` the server writes onboarding's sample content into the Space
 * when it has no Stories yet (every locale, a form and a datasource too).
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Api } from './archive'

export const TEMPLATES = ['astro'] as const

const enc = encodeURIComponent

/**
 * Onboarding's starter set into the Space, by the server (`POST /spaces/{space}/sample-content`, admin): blueprints,
 * published Stories in every locale, a form and a datasource. A Space with Stories (or a blueprint, form or datasource
 * of those names) answers 409 and nothing is written.
 */
export async function writeSample(api: Api, space: string): Promise<{ components: string[]; stories: string[]; locales: string[]; forms: string[]; datasources: string[] }> {
  return (await api.call<{ data: { components: string[]; stories: string[]; locales: string[]; forms: string[]; datasources: string[] } }>('POST', `/spaces/${enc(space)}/sample-content`)).data
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
