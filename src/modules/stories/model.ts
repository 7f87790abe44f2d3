import { t } from 'elysia'
import { FIELD_TYPES } from './blocks'

const Uuid = t.String({ format: 'uuid', error: 'must be a uuid' })
const Name = t.String({ minLength: 1, maxLength: 200, error: 'must be 1 to 200 characters' })
// Slugs are checked by the service (paths.ts) so the rule and its message live in one place.
const Slug = t.String({ minLength: 1, maxLength: 100, error: 'must be 1 to 100 characters of a-z 0-9 _ -' })
const Lang = t.String({ minLength: 1, maxLength: 35, error: 'must be a BCP-47 language tag' })
// The document shape and its blocks are validated against the blueprints by the service (block_path errors).
const Content = t.Unknown({ description: "{type: 'doc', blocks: [{component, _uid, ...fields}]}" })
const PageNo = t.Numeric({ minimum: 1, maximum: 1_000_000, error: 'must be a positive integer' })
const PerPage = t.Numeric({ minimum: 1, maximum: 100, error: 'must be between 1 and 100' })
const Depth = t.Numeric({ minimum: 1, maximum: 10, error: 'must be between 1 and 10' })

export const SpaceParams = t.Object({ space: t.String({ maxLength: 64 }) })
export const StoryParams = t.Object({ space: t.String({ maxLength: 64 }), uuid: t.String({ maxLength: 64 }) })
export const VersionParams = t.Object({
  space: t.String({ maxLength: 64 }),
  uuid: t.String({ maxLength: 64 }),
  version_no: t.Numeric({ minimum: 1, maximum: 2_147_483_647, error: 'must be a positive integer' }),
})
export const ComponentParams = t.Object({ space: t.String({ maxLength: 64 }), name: t.String({ maxLength: 64 }) })

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
  expected_version_no: t.Optional(t.Integer({ minimum: 1, error: 'must be a positive integer' })),
})

export const ListStoriesQuery = t.Object({
  // Not t.UnionEnum: Elysia gives that a default (its first value), which would filter an unfiltered listing.
  status: t.Optional(
    t.Union([t.Literal('draft'), t.Literal('published'), t.Literal('archived')], { error: 'must be draft, published or archived' }),
  ),
  parent_uuid: t.Optional(Uuid),
  q: t.Optional(t.String({ maxLength: 200 })),
  page: t.Optional(PageNo),
  per_page: t.Optional(PerPage),
})

export const LangQuery = t.Object({ lang: t.Optional(Lang) })
export const PageQuery = t.Object({ page: t.Optional(PageNo), per_page: t.Optional(PerPage) })
export const ChildrenQuery = t.Object({ depth: t.Optional(Depth) })
export const TreeQuery = t.Object({ depth: t.Optional(Depth), page: t.Optional(PageNo), per_page: t.Optional(PerPage) })

export const BulkBody = t.Object({
  action: t.UnionEnum(['publish', 'unpublish', 'archive', 'delete', 'move'], {
    error: 'must be publish, unpublish, archive, delete or move',
  }),
  uuids: t.Array(t.String({ maxLength: 64 }), { minItems: 1, maxItems: 100, error: 'must be a list of 1 to 100 uuids' }),
  parent_uuid: t.Optional(t.Union([Uuid, t.Null()], { error: 'must be a uuid or null' })),
})

// The schema's inner shape is checked by blocks.ts (blueprintErrors), which keys errors as `schema/<field>/<prop>`.
const Schema = t.Record(t.String(), t.Unknown(), {
  description: `field name → {type: ${FIELD_TYPES.join('|')}, required?, translatable?, max_length?, options?, component_whitelist?}`,
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
