import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, NullableTimestamp, oneOf } from '../../kernel/schemas'

export const AuthErrors = {
  emailTaken: defineError(
    'email_taken',
    409,
    'An account with this e-mail address exists (compared case-insensitively). Answered only to whoever holds a link mailed to that address (confirming a sign-up or a pitch demo); a sign-up itself never says it.',
  ),
  invalidCredentials: defineError('invalid_credentials', 401, 'The e-mail address or the password is wrong.'),
  registrationClosed: defineError(
    'registration_closed',
    403,
    'Sign-up is closed on this service (REGISTRATION=closed, or first-user once an account exists): ask its operator for an account.',
  ),
  registrationUnavailable: defineError(
    'registration_unavailable',
    403,
    'Sign-up confirms each address by mail (REGISTRATION_VERIFY=on), but the service has no PUBLIC_URL to build the link from: ask its operator (the same answer for every address).',
  ),
  signUpTokenInvalid: defineError(
    'sign_up_token_invalid',
    422,
    'The sign-up confirmation token is unknown, used already or older than 24 hours: sign up again for a new mail.',
  ),
  signInRefused: defineError(
    'sign_in_refused',
    403,
    'The e-mail and password are right, but this account may not sign in any more (e.g. its pitch demo ended); the message says why.',
  ),
  wrongPassword: defineError('wrong_password', 422, 'current_password is not the password of the signed-in user.'),
  resetUnavailable: defineError(
    'password_reset_unavailable',
    403,
    'Password reset by mail is off: the service has no PUBLIC_URL to build the link from (the same answer for every address).',
  ),
  adminSessionHeaderRequired: defineError(
    'admin_session_header_required',
    403,
    'The admin-session calls need the header `X-Admin-Session: 1` (the admin app sends it; a cross-site form cannot, and cross-origin script not without a preflight the service refuses).',
  ),
  adminSessionRefused: defineError(
    'admin_session_refused',
    403,
    'An admin session is opened with the bearer token of a sign-in (`POST /v1/auth/login`), not with a Space token or a token minted from an admin session.',
  ),
  resetTokenInvalid: defineError(
    'reset_token_invalid',
    422,
    'The password-reset token is unknown, used already or older than one hour: ask for a new mail.',
  ),
}

// A pragmatic e-mail check: one @, no spaces, a dot in the domain; the real proof is a delivered mail.
const EMAIL = '^[^\\s@]{1,64}@[^\\s@]+\\.[^\\s@]{2,}$'

export const RegisterBody = t.Object({
  email: t.String({ pattern: EMAIL, maxLength: 254, error: 'must be a valid e-mail address' }),
  password: t.String({ minLength: 8, maxLength: 1024, error: 'must be at least 8 characters' }),
  name: t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'is required (1 to 200 characters, not only blanks)' }),
  tenant_name: t.Optional(t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'must be 1 to 200 characters, not only blanks' })),
})

const NEW_PASSWORD = { minLength: 8, maxLength: 1024, error: 'must be at least 8 characters' }

export const PasswordChangeBody = t.Object({
  current_password: t.String({ minLength: 1, maxLength: 1024, error: 'is required' }),
  new_password: t.String(NEW_PASSWORD),
})

export const PasswordResetRequestBody = t.Object({
  email: t.String({ minLength: 1, maxLength: 254, error: 'is required' }),
})

export const PasswordResetBody = t.Object({
  token: t.String({ minLength: 1, maxLength: 200, error: 'is required', description: 'The token from the reset link (`.../reset-password/{token}`)' }),
  new_password: t.String(NEW_PASSWORD),
})

export const PasswordChangedModel = t.Object({
  revoked_sessions: Int({ description: 'How many login sessions (user tokens) of the user were signed out' }),
})
export type PasswordChangedView = typeof PasswordChangedModel.static

export const PasswordResetRequestedModel = t.Object({
  message: t.String({ description: 'The same text whether or not the address has an account' }),
})

export const LoginBody = t.Object({
  email: t.String({ minLength: 1, maxLength: 254, error: 'is required' }),
  password: t.String({ minLength: 1, maxLength: 1024, error: 'is required' }),
})

export const UserModel = t.Object({ id: Int(), email: t.String(), name: t.String() })
export type UserView = typeof UserModel.static
export const TenantModel = t.Object({ id: Int(), name: t.String() })
export type TenantView = typeof TenantModel.static

const Token = t.String({ description: 'Bearer token `<id>.<secret>`: shown this once, stored only as a hash' })
export const SessionModel = t.Object({ token: Token, user: UserModel })
export type SessionView = typeof SessionModel.static
export const RegisteredModel = t.Object({ token: Token, user: UserModel, tenant: TenantModel })

export const SignUpAcceptedModel = t.Object({
  message: t.String({ description: 'What happens next; the same text for every address' }),
  confirmation: oneOf(['mail', 'none'], {
    description:
      '`mail` (REGISTRATION_VERIFY=on): the account exists once the link mailed to the address is followed. `none` (REGISTRATION_VERIFY=off): sign in with the address and password.',
  }),
})
export type SignUpAcceptedView = typeof SignUpAcceptedModel.static

export const SignUpConfirmBody = t.Object({
  token: t.String({ minLength: 1, maxLength: 200, error: 'is required', description: 'The token from the mailed link (`.../confirm-sign-up/{token}`)' }),
})

export const SignUpConfirmedModel = t.Object({
  user: UserModel,
  tenant: TenantModel,
  warnings: t.Array(t.String(), { description: 'Empty, or what could not be done besides the account (e.g. a Space asked for at onboarding)' }),
})
export type SignUpConfirmedView = typeof SignUpConfirmedModel.static

/** The admin app's themes; a union of literals (not an enum) so that `null` stays one of its alternatives in the OpenAPI. */
const UiTheme = (opts: { error?: string; description?: string }) => t.Union([t.Literal('system'), t.Literal('light'), t.Literal('dark'), t.Null()], opts)
export const MeModel = t.Object({
  id: t.Union([Int(), t.Null()]),
  email: t.Union([t.String(), t.Null()]),
  name: t.Union([t.String(), t.Null()]),
  ui_language: t.Union([t.String(), t.Null()], {
    description: "The admin app's UI language chosen in the profile (a BCP 47 tag such as `de`); null: the browser's (and for Space tokens)",
  }),
  ui_theme: UiTheme({ description: "The admin app's theme chosen in the profile; null: the system's (and for Space tokens)" }),
  tenant: TenantModel,
  token: t.Union([
    t.Object({ type: t.Literal('user'), expires_at: NullableTimestamp }),
    t.Object({
      type: t.Literal('space'),
      space: t.Union([t.String(), t.Null()]),
      role: oneOf(['viewer', 'editor', 'admin']),
      expires_at: NullableTimestamp,
    }),
  ]),
})
export type MeView = typeof MeModel.static

/** The signed-in user's profile: each field given is changed, the others stay. */
export const ProfileBody = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'is required (1 to 200 characters, not only blanks)' })),
  ui_language: t.Optional(
    t.Union([t.String({ minLength: 2, maxLength: 35, pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$' }), t.Null()], {
      error: 'must be a language tag such as en or de-AT, or null',
      description: "The admin app's UI language (a BCP 47 tag); null: follow the browser",
    }),
  ),
  ui_theme: t.Optional(UiTheme({ error: 'must be system, light, dark or null', description: 'null: the system' })),
})

export const SignedOutEverywhereModel = t.Object({
  revoked_sessions: Int({ description: 'How many login sessions (user tokens) of the user were signed out, this one included' }),
})

export const AdminSessionModel = t.Object({
  expires_at: t.String({ format: 'date-time', description: 'When the session ends unless a tab trades it for a token before (each exchange moves this 14 days on, never past 90 days after sign-in)' }),
})
export type AdminSessionView = typeof AdminSessionModel.static

export const AdminSessionTokenModel = t.Object({
  token: t.String({ description: 'Bearer token `<id>.<secret>` of 15 minutes (a user token): shown this once, stored only as a hash' }),
  expires_at: t.String({ format: 'date-time', description: 'When the token stops working: trade the cookie again before' }),
  user: UserModel,
})
export type AdminSessionTokenView = typeof AdminSessionTokenModel.static
