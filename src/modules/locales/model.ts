import { t } from 'elysia'

export const LocaleParams = t.Object({ space: t.String({ maxLength: 64 }), code: t.String({ maxLength: 35 }) })

export const CreateLocaleBody = t.Object({
  code: t.String({ minLength: 1, maxLength: 35, error: 'must be a BCP-47 language tag' }),
  fallback: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 35 }), t.Null()], { error: 'must be a BCP-47 language tag or null' })),
})
