/**
 * The example site of in-page editing (docs/in-page-editing.md), for a quick try and for the tests:
 *
 *   SERVICE_URL=http://localhost:3000 SPACE=demo ADMIN_ORIGIN=http://localhost:3000 PORT=8080 bun examples/visual-editor/server.ts
 *
 * - `/…` (any path): index.html + site.js, a client-rendered page (the published Story at that path, read in the
 *   browser); the bridge updates its marked fields in place and site.js re-renders on the draft event.
 * - `/ssr/…`: the same Story rendered on this server (published content only: the server never sees the preview
 *   token, which stays in the URL fragment). Its script tag says `data-live="reload"`: in the visual editor the
 *   bridge reloads the page when the editor has stored a draft snapshot, and fills the marked fields from the draft
 *   read (which answers the snapshot).
 * Every page sends a strict CSP: scripts and reads from this site and the service only, framed only by the admin.
 * Any static file server works for index.html + site.js + site.css alone (edit the script tag's src and data-space).
 */
import { join } from 'node:path'

export interface ExampleSite {
  url: string
  /** Requests served per path. */
  hits: Map<string, number>
  stop(): void
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** `adminOrigin`: who may frame the site (the admin app); `null`: nobody (`frame-ancestors 'none'`, as many sites send). */
export function startExampleSite(opts: { service: string; space: string; adminOrigin: string | null; port?: number }): ExampleSite {
  const dir = import.meta.dir
  const hits = new Map<string, number>()
  const csp = `default-src 'self'; script-src 'self' ${opts.service}; connect-src 'self' ${opts.service}; style-src 'self'; img-src 'self' ${opts.service}; ${opts.adminOrigin ? `frame-ancestors 'self' ${opts.adminOrigin}` : "frame-ancestors 'none'"}`
  const html = (body: string, status = 200) => new Response(body, { status, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': csp } })
  const tag = (extra = '') => `<script src="${escape(opts.service)}/service-admin.js" data-space="${escape(opts.space)}"${extra} async></script>`

  async function serverRendered(path: string): Promise<Response> {
    const res = await fetch(`${opts.service}/v1/cdn/${encodeURIComponent(opts.space)}/stories${path}`)
    if (!res.ok) return html(`<!doctype html><title>Not found</title><p>Nothing published at ${escape(path)}</p>`, 404)
    const story = ((await res.json()) as { data: { uuid: string; name: string; full_path: string; content: { blocks?: Record<string, unknown>[] } } }).data
    const blocks = (story.content.blocks ?? [])
      .map((b, i) => {
        const fields = Object.entries(b)
          .filter(([k, v]) => k !== '_uid' && k !== 'component' && typeof v === 'string')
          .map(([k, v]) => {
            const name = k === 'headline' || k === 'title' ? 'h2' : 'p'
            return `<${name} data-story-field="content/blocks/${i}/${escape(k)}">${escape(v as string)}</${name}>`
          })
          .join('')
        return `<section data-story-block="${escape(String(b.component))}">${fields}</section>`
      })
      .join('')
    return html(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(story.name)}</title><link rel="stylesheet" href="/site.css"></head><body>` +
        `<header><a href="/ssr/">Example site (server-rendered)</a></header>` +
        `<main><article data-story-uuid="${escape(story.uuid)}" data-story-path="${escape(story.full_path)}"><h1 data-story-field="name">${escape(story.name)}</h1>${blocks}</article></main>` +
        `${tag(' data-live="reload"')}</body></html>`,
    )
  }

  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: '127.0.0.1',
    development: false,
    fetch: async (request) => {
      const path = new URL(request.url).pathname
      hits.set(path, (hits.get(path) ?? 0) + 1)
      if (path === '/site.js' || path === '/site.css') {
        return new Response(Bun.file(join(dir, path.slice(1))), { headers: { 'Content-Security-Policy': csp } })
      }
      if (path === '/ssr' || path.startsWith('/ssr/')) return serverRendered(path.slice(4).replace(/\/+$/, '') || '/home')
      const page = (await Bun.file(join(dir, 'index.html')).text()).replace('<script src="http://localhost:3000/service-admin.js" data-space="demo" async></script>', tag())
      return html(page)
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, hits, stop: () => server.stop(true) }
}

if (import.meta.main) {
  const service = process.env.SERVICE_URL ?? 'http://localhost:3000'
  const site = startExampleSite({ service, space: process.env.SPACE ?? 'demo', adminOrigin: process.env.ADMIN_ORIGIN ?? service, port: Number(process.env.PORT ?? 8080) })
  console.log(`example site at ${site.url} (set the Space's preview URL to it)`)
}
