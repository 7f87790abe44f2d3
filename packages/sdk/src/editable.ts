/**
 * @content-service/sdk/editable — the attributes the in-page editing bridge (`/service-admin.js`) reads: on the
 * element of a Story `data-story-uuid` (the Edit link) and `data-story-path` (drafts patched in place), on an element
 * showing one value `data-story-field` (its path in the read's `data`: `content/blocks/0/title`). Outside preview they
 * do nothing.
 */

export interface EditableStory {
  uuid: string
  full_path: string
}

/** `data-story-uuid` and `data-story-path` of a Story's element. */
export function editable(story: EditableStory): Record<'data-story-uuid' | 'data-story-path', string> {
  return { 'data-story-uuid': story.uuid, 'data-story-path': story.full_path }
}

/** `data-story-field` of an element showing one value: `editableField('content', 'blocks', 0, 'title')`. */
export function editableField(...path: (string | number)[]): { 'data-story-field': string } {
  return { 'data-story-field': path.join('/') }
}

/** The attributes as an HTML attribute string (escaped), for string templates. */
export function attrs(a: Record<string, string | number>): string {
  return Object.entries(a)
    .map(([k, v]) => `${k}="${String(v).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')}"`)
    .join(' ')
}
