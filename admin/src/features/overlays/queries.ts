import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'
import type { paths } from '../../api/schema'

export type Overlay = paths['/v1/spaces/{space}/dom-overlays/{id}']['get']['responses'][200]['content']['application/json']['data']
export type OverlayBody = paths['/v1/spaces/{space}/dom-overlays']['post']['requestBody']['content']['application/json']
export type OverlayTest = paths['/v1/spaces/{space}/dom-overlays/test']['post']['responses'][200]['content']['application/json']['data']

export const ACTIONS = ['hide', 'replace_text', 'replace_html', 'insert_before', 'insert_after', 'set_attribute'] as const

export const overlayKeys = { all: queryKeys.overlays }

/** Every rule of the Space in priority order (pages of 100 until `meta.total`). */
export const overlaysQuery = (space: string) =>
  queryOptions({
    queryKey: overlayKeys.all(space),
    queryFn: async () => {
      const out: Overlay[] = []
      for (let page = 1; ; page++) {
        const r = await unwrap(api.GET('/v1/spaces/{space}/dom-overlays', { params: { path: { space }, query: { page, per_page: 100 } } }))
        out.push(...r.data)
        if (out.length >= r.meta.total || r.data.length === 0) return out
      }
    },
  })

/** The body of a PUT that changes only what is given (the API replaces the whole rule). */
export const bodyOf = (o: Overlay, change: Partial<OverlayBody> = {}): OverlayBody => ({
  name: o.name,
  path_pattern: o.path_pattern,
  selector: o.selector,
  action: o.action as OverlayBody['action'],
  attribute: o.attribute,
  content: o.content,
  segment_key: o.segment_key,
  active: o.active,
  priority: o.priority,
  ...change,
})
