import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data, Paged, SpaceParams } from '../../kernel/schemas'
import { OverlayBody, OverlayListQuery, OverlayModel, OverlayParams, OverlayTestBody, OverlayTestModel } from './model'
import type { OverlayReader } from './public'
import { createOverlay, deleteOverlay, getOverlay, listOverlays, type SegmentKeys, testOverlays, updateOverlay } from './service'

const NoContent = t.Void({ description: 'No content' })

const BODY_RULES =
  '`path_pattern`: a glob on the page path, starting with `/`, matched segment by segment: each segment a picomatch glob (`*` at most once per segment, `?`, `[...]`), a whole segment `**` any number of segments (`/blog/**` matches `/blog` and everything below); braces, extglobs, parentheses, `|` are refused (they make matching cost explode). ' +
  '`selector`: a CSS selector, parsed (css-what) and checked as a browser would run it — no pseudo-elements, namespaces or unknown pseudo-classes; class and id names without escapes (422 naming `selector`). ' +
  '`action`: replace_text (content as text) | replace_html | insert_before | insert_after (content as HTML, sanitized at save with sanitize-html: no script, style, event handlers, javascript: URLs, id or name) | set_attribute (`attribute` required, from an allow-list: class, title, lang, dir, hidden, role, translate, aria-* on any element; href/target/rel on a and area, src/srcset/alt/sizes/width/height on img, srcset/sizes/media/type on source, placeholder on input and textarea, datetime on time — the selector must end at such an element; the value never a javascript:, vbscript: or non-image data: URL; stored rules the list no longer takes are not served) | hide (no content). ' +
  '`content`: locale of the Space → text (required except for hide). `segment_key`: an audience segment of the Space (only its visitors get the rule). `active` (default true), `priority` (default 0; lower applies first).'

/** DOM overlay rules (issue 30): viewer+ reads, editor+ writes. */
export function overlayRoutes(kernel: Kernel, guards: Guards, isSegmentKey: SegmentKeys, reader: OverlayReader) {
  return new Elysia({ prefix: '/spaces/:space/dom-overlays', tags: ['DOM overlays'] })
    .use(guards)
    .get('', ({ access, query }) => listOverlays(kernel, access, query), {
      params: SpaceParams,
      query: OverlayListQuery,
      spaceRole: 'viewer',
      response: Paged(OverlayModel),
      detail: { summary: 'List DOM overlay rules in priority order', description: '`per_page` 1–100 (default 25), `page` from 1; `meta.total` counts them all.' },
    })
    .post(
      '',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createOverlay(kernel, access, body, isSegmentKey) }
      },
      {
        params: SpaceParams,
        body: OverlayBody,
        spaceRole: 'editor',
        response: { 201: Data(OverlayModel) },
        detail: { summary: 'Create a DOM overlay rule', description: `${BODY_RULES} Emits \`dom_overlay.created\`.` },
      },
    )
    .post('/test', async ({ access, body }) => ({ data: await testOverlays(kernel, access, body, isSegmentKey, reader) }), {
      params: SpaceParams,
      body: OverlayTestBody,
      spaceRole: 'viewer',
      response: Data(OverlayTestModel),
      detail: {
        summary: 'Test the DOM overlay rules on an HTML snippet',
        description:
          'The active rules the page at `path` gets — chosen as the public read chooses them, in the locale chain of `lang` and for a visitor of `segment_key` (or of no segment) — applied on the server to `html` as embed.js applies them in the browser; the snippet after them comes back as `html`. Nothing in the snippet runs and nothing is stored. Bounded: `html` at most 100,000 characters and 5,000 elements (422), 1,000 elements per rule, and a time budget past which the remaining rules are listed in `skipped`. 422 names an unknown `lang` or `segment_key`.',
      },
    })
    .get('/:id', async ({ access, params }) => ({ data: await getOverlay(kernel, access, params.id) }), {
      params: OverlayParams,
      spaceRole: 'viewer',
      response: Data(OverlayModel),
      detail: { summary: 'One DOM overlay rule' },
    })
    .put('/:id', async ({ access, params, body }) => ({ data: await updateOverlay(kernel, access, params.id, body, isSegmentKey) }), {
      params: OverlayParams,
      body: OverlayBody,
      spaceRole: 'editor',
      response: Data(OverlayModel),
      detail: { summary: 'Replace a DOM overlay rule', description: `${BODY_RULES} Emits \`dom_overlay.updated\`.` },
    })
    .delete(
      '/:id',
      async ({ access, params, set }) => {
        await deleteOverlay(kernel, access, params.id)
        set.status = 204
      },
      {
        params: OverlayParams,
        spaceRole: 'editor',
        response: { 204: NoContent },
        detail: { summary: 'Delete a DOM overlay rule', description: 'Emits `dom_overlay.deleted`.' },
      },
    )
}
