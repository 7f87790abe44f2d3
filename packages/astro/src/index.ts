/**
 * @content-service/astro — the Astro integration of Content Service.
 *
 * - `contentService({baseUrl, space, token, components})`: shares the connection with the loaders and components of
 *   the build and registers the component map `<Blocks>` renders (blueprint name → `.astro` file). No client
 *   JavaScript unless `bridge: true` (the in-page editing bridge, for static previews).
 * - `storyLoader()` / `liveStoryLoader()`: Content Layer loaders (see loader.ts).
 * - `getPreviewStory(Astro)`: the draft of the requested Story on server-rendered pages, with a preview token.
 */
import { existsSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AstroIntegration } from 'astro'
import { createClient, type StoryResult } from '@content-service/sdk'
import { type ConnectionOptions, resolveConnection, setSharedConfig } from './loader'

export { editable, editableField } from '@content-service/sdk/editable'
export { type Blueprint, blockSchemas, blueprintsKey, storySchema } from './schema'
export {
  type ConnectionOptions,
  entryId,
  fetchBlueprints,
  LOADER_VERSION,
  type LiveCollectionFilter,
  type LiveStoryFilter,
  liveStoryLoader,
  type StoryLoaderOptions,
  storyLoader,
} from './loader'

/** `components` of the integration: one `.astro` file (relative to the project root) per blueprint. */
export type ComponentPaths<M = Record<string, unknown>> = { [K in keyof M & string]: string }

export interface ContentServiceOptions<M = Record<string, unknown>> extends ConnectionOptions {
  /**
   * Blueprint name → the `.astro` file rendering its blocks (`{hero: 'src/components/Hero.astro'}`). Typed by the
   * `ComponentMap` that `content-service-cli types` generates — `contentService<ComponentMap>({…})` — a blueprint
   * without a component is a type error.
   */
  components?: ComponentPaths<M>
  /**
   * Include the in-page editing bridge (`/service-admin.js`, `data-space` set): previews of drafts on a static build.
   * It is the only client JavaScript the integration adds; off by default.
   */
  bridge?: boolean
}

const VIRTUAL = 'virtual:content-service/components'

/** A component file relative to the project root (or absolute), else a package specifier (`@acme/ui/Hero.astro`). */
function moduleOf(file: string, root: URL): string {
  if (isAbsolute(file)) return file
  const local = fileURLToPath(new URL(file, root))
  return /^\.\.?\//.test(file) || existsSync(local) ? local : file
}

/** The integration. Pass the generated `ComponentMap` as type argument to have the component map checked. */
export function contentService<M = Record<string, unknown>>(options: ContentServiceOptions<M>): AstroIntegration {
  setSharedConfig(options)
  const components = (options.components ?? {}) as Record<string, string>
  return {
    name: '@content-service/astro',
    hooks: {
      'astro:config:setup'({ config, updateConfig, injectScript }) {
        setSharedConfig(options)
        const root = config.root instanceof URL ? config.root : new URL(`file://${config.root}/`)
        const entries = Object.entries(components)
        const module = [
          ...entries.map(([, file], i) => `import C${i} from ${JSON.stringify(moduleOf(file, root))}`),
          `export const components = {${entries.map(([name], i) => `${JSON.stringify(name)}: C${i}`).join(', ')}}`,
        ].join('\n')
        const resolved = `\0${VIRTUAL}`
        updateConfig({
          vite: {
            plugins: [
              {
                name: '@content-service/astro:components',
                resolveId: (id: string) => (id === VIRTUAL ? resolved : undefined),
                load: (id: string) => (id === resolved ? module : undefined),
              },
            ],
          },
        })
        if (options.bridge) {
          const c = resolveConnection(options)
          const src = `${c.baseUrl.replace(/\/+$/, '')}/service-admin.js`
          injectScript(
            'head-inline',
            `(()=>{const s=document.createElement('script');s.src=${JSON.stringify(src)};s.async=true;s.dataset.space=${JSON.stringify(c.space)};document.head.appendChild(s)})()`,
          )
        }
      },
    },
  }
}

export default contentService

/** What `getPreviewStory` reads from `Astro`: its URL, params and cookies. */
export interface AstroLike {
  url: URL
  params: Record<string, string | undefined>
  cookies?: {
    get(name: string): { value: string } | undefined
    set(name: string, value: string, o?: Record<string, unknown>): void
  }
}

export interface PreviewOptions extends ConnectionOptions {
  /** The full path (default: `Astro.params.slug`, else the URL's path). */
  path?: string
  lang?: string
  resolveRelations?: string[]
}

export const PREVIEW_PARAM = 'service-preview'
const PREVIEW_COOKIE = 'service_preview'

/**
 * On a server-rendered page: the Story's draft when the request carries a preview token (`?service-preview=p_…`,
 * kept in a cookie for an hour, the token's lifetime), else its published version. `preview` says which.
 */
export async function getPreviewStory(Astro: AstroLike, o: PreviewOptions = {}): Promise<StoryResult & { preview: boolean }> {
  const c = resolveConnection(o)
  const fromQuery = Astro.url.searchParams.get(PREVIEW_PARAM)
  const token = fromQuery || Astro.cookies?.get(PREVIEW_COOKIE)?.value || undefined
  if (fromQuery && Astro.cookies) Astro.cookies.set(PREVIEW_COOKIE, fromQuery, { httpOnly: true, sameSite: 'lax', path: '/', maxAge: 3600, secure: Astro.url.protocol === 'https:' })
  const path = (o.path ?? Astro.params.slug ?? Astro.url.pathname).replace(/^\/+|\/+$/g, '') || 'home'
  const client = createClient({ baseUrl: c.baseUrl, space: c.space, previewToken: token, fetch: c.fetch, cache: false })
  const r = await client.story(path, { lang: o.lang, version: token ? 'draft' : undefined, resolveLinks: true, resolveRelations: o.resolveRelations })
  return { ...r, preview: !!token }
}
