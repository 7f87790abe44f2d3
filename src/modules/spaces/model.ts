import { t } from 'elysia'

export const SLUG_PATTERN = '^[a-z][a-z0-9-]*$'
const Slug = t.String({ pattern: SLUG_PATTERN, maxLength: 64, error: 'must match ^[a-z][a-z0-9-]*$ (at most 64 characters)' })
const LocaleTag = t.String({ minLength: 1, maxLength: 35, error: 'must be a BCP-47 language tag' })

export const SpaceParams = t.Object({ space: t.String() })

export const CreateSpaceBody = t.Object({
  slug: Slug,
  name: t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'is required (1 to 200 characters, not only blanks)' }),
  default_lang: t.Optional(LocaleTag),
  locales: t.Optional(t.Array(LocaleTag, { minItems: 1, maxItems: 100, error: 'must be a list of 1 to 100 BCP-47 tags' })),
})

export const UpdateSpaceBody = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'must be 1 to 200 characters, not only blanks' })),
  default_lang: t.Optional(LocaleTag),
})

export const CreateTokenBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'is required (1 to 200 characters, not only blanks)' }),
  role: t.UnionEnum(['viewer', 'editor', 'admin'], { error: 'must be viewer, editor or admin' }),
})
