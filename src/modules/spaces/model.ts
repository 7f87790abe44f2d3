import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Timestamp, Int, NullableTimestamp, oneOf, SpaceSlug } from '../../kernel/schemas'

export const SpaceErrors = {
  slugTaken: defineError('slug_taken', 409, 'The Space slug is taken (slugs are unique across the service).'),
  localeExists: defineError('locale_exists', 409, 'The Space has this locale already.'),
  defaultLocale: defineError('default_locale', 409, 'The default locale cannot be removed.'),
}

export const SLUG_PATTERN = '^[a-z][a-z0-9-]*$'
const Slug = t.String({ pattern: SLUG_PATTERN, maxLength: 64, error: 'must match ^[a-z][a-z0-9-]*$ (at most 64 characters)' })
const LocaleTag = t.String({ minLength: 1, maxLength: 35, error: 'must be a BCP-47 language tag' })
const Role = oneOf(['viewer', 'editor', 'admin'], { error: 'must be viewer, editor or admin' })

export const CreateSpaceBody = t.Object({
  slug: Slug,
  name: t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'is required (1 to 200 characters, not only blanks)' }),
  default_lang: t.Optional(LocaleTag),
  locales: t.Optional(t.Array(LocaleTag, { minItems: 1, maxItems: 100, error: 'must be a list of 1 to 100 BCP-47 tags' })),
})

export const UpdateSpaceBody = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'must be 1 to 200 characters, not only blanks' })),
  default_lang: t.Optional(LocaleTag),
  preview_url: t.Optional(
    t.Union([t.String({ minLength: 1, maxLength: 2048 }), t.Null()], {
      error: 'must be an absolute http(s) URL of at most 2,048 characters, or null',
      description: "The site's URL for previews: the editor's Preview button opens it with the Story's path appended; null removes it",
    }),
  ),
})

export const CreateTokenBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'is required (1 to 200 characters, not only blanks)' }),
  role: Role,
  expires_at: t.Optional(
    t.Union([t.String({ format: 'date-time', maxLength: 64 }), t.Null()], {
      error: 'must be an ISO 8601 date-time with Z or an offset, in the future, or null',
      description: 'When the token stops working (ISO 8601 date-time with Z or an offset, in the future); null or absent: it works until revoked',
    }),
  ),
})

export const TokenParams = t.Object({ space: SpaceSlug, id: t.String({ maxLength: 64 }) })
export const LocaleParams = t.Object({ space: SpaceSlug, code: t.String({ maxLength: 35 }) })

export const CreateLocaleBody = t.Object({
  code: LocaleTag,
  fallback: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 35 }), t.Null()], { error: 'must be a BCP-47 language tag or null' })),
})

export const UpdateLocaleBody = t.Object({
  fallback: t.Optional(
    t.Union([t.String({ minLength: 1, maxLength: 35 }), t.Null()], {
      error: 'must be a BCP-47 language tag or null',
      description: 'Another locale of the Space to fall back to (no cycles); null removes the explicit fallback',
    }),
  ),
  position: t.Optional(
    Int({
      minimum: 0,
      maximum: 1000,
      error: 'must be an integer from 0 (first) to the number of locales minus one',
      description: 'The 0-based place in the display order to move the locale to; the others keep their order',
    }),
  ),
})

export const SpaceModel = t.Object({
  slug: t.String(),
  name: t.String(),
  default_lang: t.String(),
  locales: t.Array(t.String(), { description: 'The Space locales in display order; the default is one of them' }),
  preview_url: t.Union([t.String(), t.Null()], { description: "The site's URL for previews (docs/in-page-editing.md), or null" }),
  role: Role,
  archived: t.Boolean(),
  archived_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Space' })
export type SpaceView = typeof SpaceModel.static

export const SpaceTokenModel = t.Object({
  id: t.String(),
  name: t.String(),
  role: Role,
  created_at: Timestamp,
  expires_at: t.Union([Timestamp, t.Null()], { description: 'When the token stops working; null: until revoked' }),
  last_used_at: t.Union([Timestamp, t.Null()], {
    description: 'When the token last authenticated a request, to the minute (written at most once a minute); null: never used',
  }),
  created_by: t.Union([Int(), t.Null()], {
    description: 'The user who created it; the token is revoked when they leave the Space, and on a demotion below its role',
  }),
})
export type SpaceTokenView = typeof SpaceTokenModel.static

export const SpaceTokenCreatedModel = t.Composite([
  SpaceTokenModel,
  t.Object({ token: t.String({ description: 'The bearer token: shown this once, stored only as a hash' }) }),
])

export const LocaleModel = t.Object({
  code: t.String(),
  fallback: t.Union([t.String(), t.Null()]),
  is_default: t.Boolean(),
  position: Int(),
})
export type LocaleView = typeof LocaleModel.static
