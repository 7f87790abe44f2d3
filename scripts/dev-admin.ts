// bun run dev:admin: the admin app with hot reload, against a running server (`bun run dev` in another terminal).
// Bun's dev server bundles admin/index.html on the fly (Tailwind through the plugin named in bunfig.toml's
// [serve.static]) and reloads the page's modules on save; every other path (/v1/..., /version) goes to the API, so
// the app runs on one origin exactly as when the binary serves it.
//   ADMIN_API=http://127.0.0.1:3000 (default) ADMIN_DEV_PORT=5173 (default)
import adminPage from '../admin/index.html'

const api = (process.env.ADMIN_API ?? 'http://127.0.0.1:3000').replace(/\/$/, '')
const port = Number(process.env.ADMIN_DEV_PORT ?? 5173)

const server = Bun.serve({
  port,
  hostname: '127.0.0.1',
  development: { hmr: true, console: true },
  routes: { '/admin': adminPage, '/admin/*': adminPage },
  async fetch(request) {
    const url = new URL(request.url)
    const headers = new Headers(request.headers)
    headers.delete('host')
    try {
      return await fetch(`${api}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body: request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body,
        redirect: 'manual',
      })
    } catch {
      return Response.json({ error: 'bad_gateway', message: `The API at ${api} does not answer: start it with \`bun run dev\`.` }, { status: 502 })
    }
  },
})
console.log(`admin (hot reload): ${server.url}admin  →  API ${api}`)
