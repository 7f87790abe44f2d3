/**
 * Stable, readable `operationId`s for the OpenAPI description, derived from each operation's method and path (so they
 * change only when the path does): `GET /v1/spaces/{space}/stories` → `listStories`, `GET …/stories/{uuid}` →
 * `getStory`, `POST …/stories/{uuid}/publish` → `publishStory`, `GET /v1/cdn/{space}/products/{slug}` →
 * `getPublicProduct`. A route may name its own (`detail.operationId`); clashes are made unique deterministically.
 * Typed clients (openapi-fetch, generators) and the SDK name operations by them.
 */

const cap = (w: string) => (w ? w[0].toUpperCase() + w.slice(1) : w)
const words = (seg: string) => seg.split(/[-_.]+/).filter(Boolean)
const isParam = (s: string) => s.startsWith('{')
const isPlural = (w: string) => w.length > 3 && /s$/.test(w) && !/(ss|us)$/.test(w)

function singular(w: string) {
  if (!isPlural(w)) return w
  if (/ies$/.test(w)) return `${w.slice(0, -3)}y`
  if (/(ches|shes|xes|sses)$/.test(w)) return w.slice(0, -2)
  return w.slice(0, -1)
}

export function operationIdOf(method: string, path: string): string {
  let segs = path.split('/').filter(Boolean)
  if (segs[0] === 'v1') segs = segs.slice(1)
  let scope = ''
  // Everything Space-scoped sits under /spaces/{space}/<collection>: the collection names it.
  if (segs[0] === 'spaces' && segs[1] === '{space}' && segs.length > 2 && isPlural(words(segs[2]).at(-1) ?? '')) segs = segs.slice(2)
  else if (segs[0] === 'cdn' && segs[1] === '{space}') {
    segs = segs.slice(2)
    scope = 'Public'
  }
  const endsWithParam = segs.length > 0 && isParam(segs[segs.length - 1])
  const statics = segs.map((s, i) => ({ s, i })).filter((x) => !isParam(x.s))
  const nounOf = (list: { s: string; i: number }[], singularLast: boolean) =>
    list
      .map(({ s, i }, k) => {
        const ws = words(s)
        if (isParam(segs[i + 1] ?? '') || (singularLast && k === list.length - 1)) ws[ws.length - 1] = singular(ws[ws.length - 1])
        return ws.map(cap).join('')
      })
      .join('')
  const m = method.toLowerCase()
  const last = statics[statics.length - 1]
  const lastWord = last ? (words(last.s).at(-1) ?? '') : ''
  const isFile = last ? last.s.includes('.') : false
  if (m === 'get') return `${!endsWithParam && !isFile && isPlural(lastWord) ? 'list' : 'get'}${scope}${nounOf(statics, false)}`
  if (m === 'put' || m === 'patch') return `update${scope}${nounOf(statics, true)}`
  if (m === 'delete') return `delete${scope}${nounOf(statics, true)}`
  if (!endsWithParam && last && !isPlural(lastWord)) {
    // An action: POST …/{uuid}/publish → publishStory; POST /auth/login → authLogin.
    const verb = words(last.s)
      .map((w, i) => (i ? cap(w) : w))
      .join('')
    const rest = nounOf(statics.slice(0, -1), false)
    if ((last.i > 0 && isParam(segs[last.i - 1])) || !rest) return `${verb}${scope}${rest}`
    return `${rest.charAt(0).toLowerCase()}${rest.slice(1)}${scope}${cap(verb)}`
  }
  return `create${scope}${nounOf(statics, true)}`
}

/** Fills `operationId` where a route named none and makes every one unique (the later of a clash gets a suffix). */
export function assignOperationIds(paths: Record<string, Record<string, { operationId?: string }>>, explicit: ReadonlySet<string>) {
  const taken = new Set<string>()
  const ops: { path: string; method: string; op: { operationId?: string } }[] = []
  for (const [path, item] of Object.entries(paths)) for (const [method, op] of Object.entries(item)) ops.push({ path, method, op })
  // Named ones first: they keep their names.
  for (const o of ops) if (o.op.operationId && explicit.has(`${o.method} ${o.path}`)) taken.add(o.op.operationId)
  for (const o of ops) {
    if (o.op.operationId && explicit.has(`${o.method} ${o.path}`)) continue
    let id = operationIdOf(o.method, o.path)
    if (taken.has(id) && (o.method === 'put' || o.method === 'patch')) id = id.replace(/^update/, o.method === 'put' ? 'replace' : 'patch')
    if (taken.has(id) && !o.path.startsWith('/v1/')) id = `${id}AtRoot`
    const param = /\{([^}]+)\}$/.exec(o.path)?.[1]
    if (taken.has(id) && param) id = `${id}By${cap(param.replace(/[^A-Za-z0-9]/g, ''))}`
    for (let n = 2; taken.has(id); n++) id = `${id.replace(/\d+$/, '')}${n}`
    o.op.operationId = id
    taken.add(id)
  }
}
