import { Value } from '@sinclair/typebox/value'
import type { TSchema } from 'elysia'
import type { SpaceAccess } from '../../kernel/auth'
import { validationFailed } from '../../kernel/errors'
import { actorOf, type FilterDeclarations } from '../../kernel/filters'
import type { Kernel } from '../../kernel/kernel'
import { CreateStoryBody, UpdateStoryBody } from './model'
import type { CreateStoryInput, UpdateStoryInput } from './service'

/**
 * The Stories' filter hooks (kernel/filters.ts): offered before the change, with no transaction open. A handler
 * (a plugin) may veto any of them; `story.before_save` may also be amended — the changes it returns are validated
 * again exactly like a request body (and the content against the blueprints, by the save itself).
 */
export interface StoryBeforeSave {
  operation: 'create' | 'update'
  /** The Story saved (null uuid: being created). */
  story: { uuid: string | null }
  /** The fields of the save as sent (the create or update body). Amendable. */
  changes: Record<string, unknown>
}
export interface StoryBeforePublish {
  story: { uuid: string; name: string; slug: string; full_path: string; lang: string; version_no: number; content: unknown }
}
export interface StoryBeforeDelete {
  operation: 'archive' | 'delete'
  story: { uuid: string; name: string; slug: string; full_path: string; lang: string; status: string }
}

declare module '../../kernel/filters' {
  interface FilterMap {
    'story.before_save': StoryBeforeSave
    'story.before_publish': StoryBeforePublish
    'story.before_delete': StoryBeforeDelete
  }
}

const STORY = '/v1/spaces/{space}/stories'
export const storyFilterHooks: FilterDeclarations = {
  'story.before_save': {
    description: 'Before a Story is created or saved: `changes` is the body; amend it to normalise or enrich the document.',
    amend: true,
    routes: [`POST ${STORY}`, `PUT ${STORY}/{uuid}`, `POST ${STORY}/bulk`, `POST ${STORY}/{uuid}/versions/{version_no}/restore`],
  },
  'story.before_publish': {
    description: 'Before a Story is published: its draft in its own locale.',
    amend: false,
    routes: [`POST ${STORY}/{uuid}/publish`, `POST ${STORY}/bulk`],
  },
  'story.before_delete': {
    description: 'Before a Story is archived or deleted.',
    amend: false,
    routes: [`DELETE ${STORY}/{uuid}`, `POST ${STORY}/{uuid}/archive`, `POST ${STORY}/bulk`],
  },
}

/** Field errors of a body against its schema, keyed like the routes' validation errors. */
function bodyErrors(schema: TSchema, value: unknown): Record<string, string[]> | null {
  const fields: Record<string, string[]> = Object.create(null)
  for (const e of Value.Errors(schema, value)) {
    const key = e.path.replace(/^\//, '') || 'body'
    const custom = (e.schema as { error?: unknown }).error
    ;(fields[key] ??= []).push(typeof custom === 'string' ? custom : e.message)
  }
  return Object.keys(fields).length ? fields : null
}

/** `story.before_save`: the input to save (the plugins' amendment, checked like a request body), or 422. */
export async function beforeSave<I extends CreateStoryInput | UpdateStoryInput>(
  kernel: Kernel,
  access: SpaceAccess,
  uuid: string | null,
  input: I,
): Promise<I> {
  const payload: StoryBeforeSave = { operation: uuid === null ? 'create' : 'update', story: { uuid }, changes: input as Record<string, unknown> }
  const out = await kernel.filters.run('story.before_save', payload, actorOf(access))
  if (out === payload) return input
  const changes = (out as Partial<StoryBeforeSave> | null)?.changes
  const errors = bodyErrors(uuid === null ? CreateStoryBody : UpdateStoryBody, changes)
  if (errors) throw validationFailed(errors, "A plugin's amendment of the Story is not valid.")
  return changes as I
}
