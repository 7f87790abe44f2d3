import pkg from '../../../package.json'
import type { Config } from '../../config'
import embedSource from './assets/embed.js' with { type: 'text' }
import adminSource from './assets/service-admin.js' with { type: 'text' }

export const SERVICE_VERSION: string = pkg.version

const MINIFIER = new Bun.Transpiler({ loader: 'js', minifyWhitespace: true })
// The bridge is minified fully (identifiers and syntax too): it is the larger script and ships to every visitor.
const FULL_MINIFIER = new Bun.Transpiler({ loader: 'js', minify: { whitespace: true, identifiers: true, syntax: true } } as ConstructorParameters<typeof Bun.Transpiler>[0])

export interface EmbedScript {
  body: string
  integrity: string
}

/**
 * A script of spec 9 with its version stamped in, and its SRI hash (sha384, base64). The embed script
 * (assets/embed.js): the version check on mount, `data-service-auto-update`, the analytics beacon. The admin script
 * (assets/service-admin.js): the in-page editing bridge, which does nothing (and requests nothing) unless the page was
 * opened from the editor's Preview button (docs/in-page-editing.md).
 */
export function buildScript(kind: 'embed' | 'admin'): EmbedScript {
  const vars =
    kind === 'embed'
      ? { __NAME__: 'embed script', __FILE__: 'embed.js', __COMPONENT__: 'embed_js', __GLOBAL__: 'embed' }
      : { __NAME__: 'in-page editing bridge', __FILE__: 'service-admin.js', __COMPONENT__: 'service_admin_js', __GLOBAL__: 'admin' }
  let body = ((kind === 'embed' ? embedSource : adminSource) as unknown as string).replaceAll('__VERSION__', SERVICE_VERSION)
  for (const [k, v] of Object.entries(vars)) body = body.replaceAll(k, v)
  // Served minified (the comment above the code documents the source; the README documents the attributes).
  body = `/* Content Service ${vars.__FILE__} ${SERVICE_VERSION} */\n${(kind === 'embed' ? MINIFIER : FULL_MINIFIER).transformSync(body).trim()}\n`
  const digest = new Bun.CryptoHasher('sha384').update(body).digest('base64')
  return { body, integrity: `sha384-${digest}` }
}

export function versionDocument(config: Config, baseUrl: string, embed: EmbedScript, admin: EmbedScript) {
  const meta = pkg.contentService
  return {
    service: {
      version: SERVICE_VERSION,
      channel: config.releaseChannel,
      released_at: meta.releasedAt,
      min_supported_sdk: meta.minSupportedSdk,
      min_supported_embed: meta.minSupportedEmbed,
    },
    components: {
      embed_js: {
        latest: SERVICE_VERSION,
        url: `${baseUrl}/embed.js`,
        versioned_url: `${baseUrl}/embed-v${SERVICE_VERSION}.js`,
        integrity: embed.integrity,
        changelog: meta.changelogUrl,
      },
      service_admin_js: {
        latest: SERVICE_VERSION,
        url: `${baseUrl}/service-admin.js`,
        integrity: admin.integrity,
      },
      sdk_js: { latest: SERVICE_VERSION, npm: meta.npm.sdk_js },
      sdk_astro: { latest: SERVICE_VERSION, npm: meta.npm.sdk_astro },
      cli: { latest: SERVICE_VERSION, npm: meta.npm.cli },
    },
    images: { widths: [...config.imageWidths], formats: ['webp', 'avif', 'jpg', 'png'] },
  }
}
