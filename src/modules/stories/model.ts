import type { TProperties } from '@sinclair/typebox'
import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import type { ReadStep, ReadStepMeta, StoryMeta } from '../../kernel/read'
import { PageMeta, PageNo, Timestamp, Int, IntId, intString, NullableTimestamp, oneOf, perPage, SpaceSlug, Uuid } from '../../kernel/schemas'
import { FIELD_TYPES } from './blocks'

export const StoryErrors = {
  pathTaken: defineError('path_taken', 409, 'Another Story has this full_path in the Space.'),
  storyArchived: defineError('story_archived', 409, 'The Story is archived: it can only be deleted.'),
  hasChildren: defineError('has_children', 409, 'The Story has children: move or delete them first.'),
  versionConflict: defineError('version_conflict', 409, 'expected_version_no is not the current version (someone saved meanwhile).'),
  translationNotFound: defineError('translation_not_found', 404, 'The Story has no content in the requested locale.'),
  componentExists: defineError('component_exists', 409, 'A component blueprint with this name exists in the Space.'),
  componentInUse: defineError('component_in_use', 409, 'Stories still use the component blueprint.'),
}

const Name = t.String({ minLength: 1, maxLength: 200, error: 'must be 1 to 200 characters' })
// Slugs are checked by the service (paths.ts) so the rule and its message live in one place.
const Slug = t.String({ minLength: 1, maxLength: 100, error: 'must be 1 to 100 characters of a-z 0-9 _ -' })
const Lang = t.String({ minLength: 1, maxLength: 35, error: 'must be a BCP-47 language tag' })
/** A block of a Story document (the named `Block` schema of the OpenAPI description). */
const BlockSchema = {
  $id: 'Block',
  type: 'object',
  description: 'A block: its component blueprint, a document-unique `_uid`, and the blueprint’s fields (blocks fields hold nested blocks)',
  required: ['component', '_uid'],
  properties: {
    component: { type: 'string', description: 'The component blueprint' },
    _uid: { type: 'string', description: '1 to 64 characters of A-Z a-z 0-9 _ -, unique in the document' },
  },
  additionalProperties: true,
}

// The document shape and its blocks are validated against the blueprints by the service (block_path errors), so the
// schema validates nothing here (Unknown) and only describes: the named `StoryContent` of the OpenAPI description.
const Content = t.Unknown({
  $id: 'StoryContent',
  description: "The block document `{type: 'doc', blocks: [{component, _uid, ...fields}]}`, validated against the component blueprints",
  type: 'object',
  required: ['type', 'blocks'],
  properties: { type: { type: 'string', const: 'doc' }, blocks: { type: 'array', items: BlockSchema } },
  additionalProperties: false,
})
const Depth = intString(1, 10, { description: 'Levels, 1 to 10' })
const StoryPerPage = perPage(100, 25)
const Status = oneOf(['draft', 'published', 'archived'])

export const StoryParams = t.Object({ space: SpaceSlug, uuid: Uuid })
export const VersionParams = t.Object({ space: SpaceSlug, uuid: Uuid, version_no: IntId })
export const ComponentParams = t.Object({ space: SpaceSlug, name: t.String({ maxLength: 64 }) })

export const CreateStoryBody = t.Object({
  name: Name,
  slug: Slug,
  parent_uuid: t.Optional(t.Union([Uuid, t.Null()], { error: 'must be a uuid or null' })),
  is_folder: t.Optional(t.Boolean({ error: 'must be true or false' })),
  lang: t.Optional(Lang),
  content: t.Optional(Content),
})

export const UpdateStoryBody = t.Object({
  name: t.Optional(Name),
  slug: t.Optional(Slug),
  parent_uuid: t.Optional(t.Union([Uuid, t.Null()], { error: 'must be a uuid or null' })),
  content: t.Optional(Content),
  lang: t.Optional(Lang),
  expected_version_no: t.Optional(Int({ minimum: 1, maximum: 2_147_483_647, error: 'must be a positive integer' })),
})

export const ListStoriesQuery = t.Object({
  // Not t.UnionEnum: Elysia gives that a default (its first value), which would filter an unfiltered listing.
  status: t.Optional(
    t.Union([t.Literal('draft'), t.Literal('published'), t.Literal('archived')], { error: 'must be draft, published or archived' }),
  ),
  parent_uuid: t.Optional(Uuid),
  q: t.Optional(t.String({ maxLength: 200 })),
  page: t.Optional(PageNo),
  per_page: t.Optional(StoryPerPage),
})

export const LangQuery = t.Object({ lang: t.Optional(Lang) })
export const VersionsQuery = t.Object({ page: t.Optional(PageNo), per_page: t.Optional(StoryPerPage), lang: t.Optional(Lang) })
export const ChildrenQuery = t.Object({ depth: t.Optional(Depth) })
export const TreeQuery = t.Object({ depth: t.Optional(Depth), page: t.Optional(PageNo), per_page: t.Optional(StoryPerPage) })

export const BulkBody = t.Object({
  action: oneOf(['publish', 'unpublish', 'archive', 'delete', 'move'], {
    error: 'must be publish, unpublish, archive, delete or move',
  }),
  uuids: t.Array(t.String({ maxLength: 64 }), { minItems: 1, maxItems: 100, error: 'must be a list of 1 to 100 uuids' }),
  parent_uuid: t.Optional(t.Union([Uuid, t.Null()], { error: 'must be a uuid or null' })),
})

// The schema's inner shape is checked by blocks.ts (blueprintErrors), which keys errors as `schema/<field>/<prop>`.
const Schema = t.Record(t.String(), t.Unknown(), {
  description: `field name → {type: ${FIELD_TYPES.join('|')}, required?, translatable?, max_length?, options?, component_whitelist?, label?, help?}; component_whitelist names existing blueprints; label and help map locale codes to texts. The fields keep the order given: every answer lists them in it.`,
})

export const CreateComponentBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 64, error: 'is required (a-z 0-9 _ -, starting with a letter)' }),
  display_name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  is_root: t.Optional(t.Boolean()),
  is_nestable: t.Optional(t.Boolean()),
  schema: t.Optional(Schema),
})

export const UpdateComponentBody = t.Object({
  name: t.Optional(t.String({ maxLength: 64 })),
  display_name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  is_root: t.Optional(t.Boolean()),
  is_nestable: t.Optional(t.Boolean()),
  schema: t.Optional(Schema),
})

// ---- responses ----

export const StoryModel = t.Object({
  id: Int(),
  uuid: t.String({ format: 'uuid' }),
  name: t.String(),
  slug: t.String(),
  full_path: t.String({ description: 'Begins with /' }),
  parent_uuid: t.Union([t.String({ format: 'uuid' }), t.Null()]),
  is_folder: t.Boolean(),
  lang: t.String({ description: 'The locale of name and content in this response' }),
  primary_lang: t.String({ description: "The Story's own locale (translations are the others)" }),
  translations: t.Array(t.String()),
  version_no: Int(),
  status: Status,
  has_unpublished_changes: t.Boolean(),
  content: t.Optional(Content),
  published_at: NullableTimestamp,
  archived_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Story' })
export type StoryView = typeof StoryModel.static

export const StoryListModel = t.Object({ data: t.Array(StoryModel), meta: PageMeta })

const Author = t.Union([
  t.Object({ user_id: Int(), name: t.Union([t.String(), t.Null()], { description: 'The user’s name (null once the account is gone)' }) }),
  t.Null(),
])
export const VersionSummaryModel = t.Object({
  version_no: Int(),
  lang: t.String(),
  name: t.String(),
  slug: t.String(),
  full_path: t.String(),
  author: Author,
  created_at: Timestamp,
})
export const VersionListModel = t.Object({ data: t.Array(VersionSummaryModel), meta: PageMeta })
export const VersionModel = t.Composite([VersionSummaryModel, t.Object({ content: Content })])

export interface TreeNode {
  uuid: string
  name: string
  slug: string
  full_path: string
  is_folder: boolean
  status: 'draft' | 'published' | 'archived'
  has_unpublished_changes: boolean
  /** Present when the node's children were loaded (within `depth`). */
  children?: TreeNode[]
  /** Present when they were not: whether there are any. */
  has_children?: boolean
}
export const TreeNodeModel = t.Unsafe<TreeNode>(t.Recursive(
  (Self) =>
    t.Object({
      uuid: t.String({ format: 'uuid' }),
      name: t.String(),
      slug: t.String(),
      full_path: t.String(),
      is_folder: t.Boolean(),
      status: Status,
      has_unpublished_changes: t.Boolean(),
      children: t.Optional(t.Array(Self, { description: 'Present when the children were loaded (within depth)' })),
      has_children: t.Optional(t.Boolean({ description: 'Present when they were not: whether there are any' })),
    }),
  { $id: 'TreeNode' },
))
export const ChildrenModel = t.Object({ data: t.Array(TreeNodeModel), meta: t.Object({ depth: Int(), truncated: t.Boolean() }) })
export const TreeModel = t.Object({
  data: t.Array(TreeNodeModel),
  meta: t.Object({ total: Int(), page: Int(), per_page: Int(), depth: Int(), truncated: t.Boolean() }),
})

export const BulkResultModel = t.Union([
  t.Object({ uuid: t.String(), ok: t.Literal(true), status: t.String(), full_path: t.Optional(t.String()) }),
  t.Object({
    uuid: t.String(),
    ok: t.Literal(false),
    status_code: Int(),
    error: t.String(),
    message: t.String(),
    errors: t.Optional(t.Record(t.String(), t.Array(t.String()))),
  }),
])
export type BulkResult = typeof BulkResultModel.static
export const BulkResponseModel = t.Object({
  data: t.Array(BulkResultModel),
  meta: t.Object({ succeeded: Int(), failed: Int() }),
})

const FieldDefModel = t.Object(
  {
    type: oneOf([...FIELD_TYPES]),
    required: t.Optional(t.Boolean()),
    translatable: t.Optional(t.Boolean()),
    max_length: t.Optional(Int()),
    options: t.Optional(t.Array(t.String())),
    component_whitelist: t.Optional(t.Array(t.String(), { description: 'blocks fields: the blueprints allowed inside (each must exist in the Space)' })),
    label: t.Optional(t.Record(t.String(), t.String(), { description: 'locale code → the name editors see instead of the key (at most 120 characters)' })),
    help: t.Optional(t.Record(t.String(), t.String(), { description: 'locale code → a hint shown under the field (at most 1000 characters)' })),
  },
  { additionalProperties: true, $id: 'FieldDef' },
)
export const ComponentModel = t.Object({
  name: t.String(),
  display_name: t.String(),
  is_root: t.Boolean(),
  is_nestable: t.Boolean(),
  schema: t.Record(t.String(), FieldDefModel),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Component' })
export type ComponentView = typeof ComponentModel.static
export const ComponentUsageModel = t.Object({
  stories: Int({ description: 'Live (not archived) Stories with a block of this blueprint in a draft or the public snapshot, any locale: deleting it answers 409 while this is over 0' }),
  allowed_in: t.Array(t.String(), { description: 'Blueprints whose blocks fields name this one in their component_whitelist' }),
})

/** The public read's Story (spec 4.5): the body's `data`. */
export const PublicStoryData = t.Object({
  id: Int(),
  uuid: t.String({ format: 'uuid' }),
  name: t.String(),
  slug: t.String(),
  full_path: t.String(),
  lang: t.String({ description: 'The locale served (after the fallback chain)' }),
  version_no: Int(),
  published_at: NullableTimestamp,
  content: Content,
}, { $id: 'PublicStory' })

/** A served Story as one value: the body's `data` with its `meta` (the GraphQL Story type resolves it). */
export type PublicStoryView = typeof PublicStoryData.static & { meta: StoryMeta }

/**
 * The read steps' `meta` declarations (kernel/read.ts `ReadStepMeta`), in step order; a key declared twice is a
 * programming error, refused at start-up.
 */
export function declaredMeta(steps: readonly ReadStep[]): ReadStepMeta[] {
  const owners = new Map<string, string>()
  const out: ReadStepMeta[] = []
  for (const step of steps) {
    if (!step.meta) continue
    for (const key of Object.keys(step.meta.schema)) {
      const other = owners.get(key)
      if (other !== undefined) throw new Error(`read steps "${other}" and "${step.name}" both declare meta.${key}`)
      owners.set(key, step.name)
    }
    out.push(step.meta)
  }
  return out
}

/**
 * The public read's body (spec 4.5): `data`, and `meta` with the entries the registered read steps declare (built
 * once, when the routes are).
 */
export function publicStoryModel(steps: readonly ReadStep[]) {
  const meta = storyMetaModel(steps)
  return t.Object({
    data: PublicStoryData,
    rels: t.Optional(t.Array(t.Composite([PublicStoryData, t.Object({ meta })]), { description: 'With resolve_relations: the Stories the named fields hold' })),
    meta: t.Composite([meta, t.Object({ rel_uuids: t.Optional(t.Array(t.String(), { description: 'Relation uuids past the 50 resolved' })) })], {
      additionalProperties: true,
    }),
  })
}

/** A served Story's `meta`: the content version, then the entries the read steps declare. */
function storyMetaModel(steps: readonly ReadStep[]) {
  const meta: TProperties = {
    cv: Int({ description: 'The Space content version: moves with every publish, unpublish, move or delete in the Space' }),
  }
  for (const m of declaredMeta(steps)) Object.assign(meta, m.schema)
  return t.Object(meta, { additionalProperties: true, $id: 'StoryMeta' })
}

/** `GET /cdn/{space}/stories`: items are the single read's `data` with its `meta` inside. */
export function publicStoryListModel(steps: readonly ReadStep[]) {
  const item = t.Composite([PublicStoryData, t.Object({ meta: storyMetaModel(steps) })], { $id: 'PublicStoryListItem' })
  return t.Object(
    {
      data: t.Array(item),
      rels: t.Optional(t.Array(item, { description: 'With resolve_relations: the Stories the named fields hold (at most 50)' })),
      meta: t.Object({
        cv: Int({ description: 'The Space content version' }),
        per_page: Int(),
        next_cursor: t.Union([t.String(), t.Null()], { description: 'The cursor of the next page; null on the last' }),
        rel_uuids: t.Optional(t.Array(t.String(), { description: 'Relation uuids past the 50 resolved' })),
      }),
    },
    { $id: 'PublicStoryList' },
  )
}

/** `GET /cdn/{space}/changes`. */
export const changesModel = t.Object(
  {
    data: t.Array(
      t.Object(
        {
          kind: oneOf(['published', 'unpublished', 'moved', 'deleted']),
          uuid: t.String({ format: 'uuid' }),
          full_path: t.String({ description: 'Where the Story is now (unpublished, deleted: where it was)' }),
          from_path: t.Optional(t.String({ description: 'moved: the path it left' })),
          cv: Int({ description: 'The content version of this change' }),
          at: Timestamp,
        },
        { $id: 'StoryChange' },
      ),
    ),
    meta: t.Object({
      cv: Int({ description: 'The Space content version now' }),
      next_cursor: t.String({ description: 'Pass as `since` next time' }),
      has_more: t.Boolean({ description: 'More changes wait: call again at once' }),
    }),
  },
  { $id: 'StoryChanges' },
)
