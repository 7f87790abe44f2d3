import { t } from 'elysia'

// A pragmatic e-mail check: one @, no spaces, a dot in the domain; the real proof is a delivered mail.
const EMAIL = '^[^\\s@]{1,64}@[^\\s@]+\\.[^\\s@]{2,}$'

export const RegisterBody = t.Object({
  email: t.String({ pattern: EMAIL, maxLength: 254, error: 'must be a valid e-mail address' }),
  password: t.String({ minLength: 8, maxLength: 1024, error: 'must be at least 8 characters' }),
  name: t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'is required (1 to 200 characters, not only blanks)' }),
  tenant_name: t.Optional(t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'must be 1 to 200 characters, not only blanks' })),
})

export const LoginBody = t.Object({
  email: t.String({ minLength: 1, maxLength: 254, error: 'is required' }),
  password: t.String({ minLength: 1, maxLength: 1024, error: 'is required' }),
})
