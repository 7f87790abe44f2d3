import type { EventDeclarations } from '../../kernel/events'

/** The Story as it is after the change (spec 6's story object, plus the database id for internal consumers). */
export interface StoryEventPayload {
  story: { id: number; uuid: string; slug: string; full_path: string; lang: string; version_no: number; status: string }
}

/** Internal: a Story's path changed, and with it every path below it. */
export interface StoryMovedPayload {
  story: { id: number; uuid: string; from: string; to: string }
}

declare module '../../kernel/events' {
  interface EventMap {
    'story.created': StoryEventPayload
    'story.published': StoryEventPayload
    'story.unpublished': StoryEventPayload
    'story.deleted': StoryEventPayload
    'version.created': StoryEventPayload
    'story.moved': StoryMovedPayload
  }
}

const STORY_FIELDS = ['uuid', 'slug', 'full_path', 'lang', 'version_no', 'status'] as const
const STORY_BODY = `\`story: {${STORY_FIELDS.join(', ')}}\``

/** Spec 6's envelope: `story: {uuid, slug, full_path, lang, version_no, status}` (no database id). */
const storyBody = (p: StoryEventPayload) => ({ story: Object.fromEntries(STORY_FIELDS.map((f) => [f, p.story?.[f] ?? null])) })

export const storyEvents: EventDeclarations = {
  'story.created': { description: 'Internal: a Story was created (usage counters; its first version fires version.created).' },
  'story.published': { description: 'A Story was published (or re-published with changes).', webhook: storyBody, body: STORY_BODY },
  'story.unpublished': { description: 'A Story left the published status (unpublish, archive or delete).', webhook: storyBody, body: STORY_BODY },
  'story.deleted': { description: 'A Story was archived or deleted (fired once: not again at a delete after an archive).', webhook: storyBody, body: STORY_BODY },
  'version.created': { description: 'A Story was saved: a new StoryVersion exists.', webhook: storyBody, body: STORY_BODY },
  'story.moved': { description: 'Internal: a Story and its subtree changed path (public caches refresh).' },
}
