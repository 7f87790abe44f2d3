import { t } from 'elysia'
import { defineError } from '../../kernel/errors'
import { Int, NullableTimestamp, oneOf, Timestamp } from '../../kernel/schemas'
import { AuthErrors, RegisterBody, TenantModel, UserModel } from '../auth/model'
import { CreateSpaceBody, SpaceErrors, SpaceModel } from '../spaces/model'

export const OnboardingErrors = {
  inviteeExists: defineError('pitch_invitee_exists', 409, 'A pitch invitee with this slug exists already (slugs are unique across the service).'),
  inviteeLimit: defineError('pitch_invitee_limit', 409, 'The Tenant has 1,000 pitch invitees; delete some first.'),
  alreadyProvisioned: defineError('already_provisioned', 409, 'The demo account of this pitch invitee was provisioned already (once per invitee).'),
  pitchUnavailable: defineError(
    'pitch_unavailable',
    403,
    'Pitch demos are off on this service (PITCH_DEMOS=off, the default), or it has no PUBLIC_URL to build the mailed demo link from; the message says which.',
  ),
  pitchLinkInvalid: defineError(
    'pitch_link_invalid',
    422,
    'The demo link is unknown, used already, replaced by a newer one or older than 7 days: ask for a new one (the same test-account call).',
  ),
}

/** Every error the module's routes answer (its own, and the account and Space conflicts it shares with auth and spaces). */
export const ONBOARDING_ERRORS = [
  ...Object.values(OnboardingErrors),
  AuthErrors.emailTaken,
  AuthErrors.registrationClosed,
  AuthErrors.registrationUnavailable,
  SpaceErrors.slugTaken,
]

export const MAX_INVITEES_PER_TENANT = 1000

export const OnboardBody = t.Object({
  ...RegisterBody.properties,
  space: CreateSpaceBody,
  sample_content: t.Optional(t.Boolean({ description: 'Also write the starter content (blueprints, published Stories in every locale, a form, a datasource). Default false.' })),
})
export type OnboardInput = typeof OnboardBody.static

export const SampleSummaryModel = t.Object({
  components: t.Array(t.String()),
  stories: t.Array(t.String(), { description: 'Full paths of the sample Stories (folders included); every other one is published in every locale' }),
  locales: t.Array(t.String()),
  forms: t.Array(t.String()),
  datasources: t.Array(t.String()),
})

const Token = t.String({ description: 'Bearer token `<id>.<secret>` of the new user: shown this once, stored only as a hash' })

export const OnboardedModel = t.Object({
  token: Token,
  user: UserModel,
  tenant: TenantModel,
  space: SpaceModel,
  sample_content: t.Union([SampleSummaryModel, t.Null()], { description: 'What the sample step wrote; null when not asked for (or when it failed: see warnings)' }),
  warnings: t.Array(t.String(), {
    description: 'Empty, or why the sample step failed after the account was created (the account, Tenant and Space stay)',
  }),
})
export type OnboardedView = typeof OnboardedModel.static

export const PITCH_SLUG_PATTERN = '^[a-z][a-z0-9-]*$'
const PitchSlug = t.String({ pattern: PITCH_SLUG_PATTERN, maxLength: 64, error: 'must match ^[a-z][a-z0-9-]*$ (at most 64 characters)' })
export const PitchParams = t.Object({ slug: PitchSlug })

const EMAIL = '^[^\\s@<>()",;:\\\\\\[\\]]{1,64}@[^\\s@<>()",;:\\\\\\[\\]]+\\.[^\\s@<>()",;:\\\\\\[\\]]{2,}$'
export const PitchInviteeBody = t.Object({
  slug: PitchSlug,
  name: t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'is required (1 to 200 characters, not only blanks)' }),
  email: t.String({ pattern: EMAIL, maxLength: 254, error: 'must be a valid e-mail address' }),
})
export type PitchInviteeInput = typeof PitchInviteeBody.static

export const PitchInviteeModel = t.Object({
  slug: t.String(),
  name: t.String(),
  email: t.String(),
  status: oneOf(['invited', 'provisioned', 'expired'], {
    description: 'invited: no demo yet; provisioned: the demo is live; expired: its PITCH_TTL_DAYS ran out (or it was closed)',
  }),
  provisioned_at: NullableTimestamp,
  expires_at: t.Union([Timestamp, t.Null()], { description: 'When the demo Tenant expires (provisioned_at + PITCH_TTL_DAYS); null before provisioning' }),
  created_at: Timestamp,
})
export type PitchInviteeView = typeof PitchInviteeModel.static

export const PitchMailedModel = t.Object({
  message: t.String({ description: 'The same text whatever the address: the link goes to the invitee only' }),
})

export const PitchClaimBody = t.Object({
  token: t.String({ minLength: 1, maxLength: 200, error: 'is required', description: 'The token from the mailed link (`.../pitch-demo/{token}`)' }),
  password: t.String({ minLength: 8, maxLength: 1024, error: 'must be at least 8 characters', description: 'The password of the demo account' }),
})

export const PitchClaimedModel = t.Object({
  user: UserModel,
  space: t.String({ description: 'Slug of the demo Space' }),
  expires_at: Timestamp,
  sample_content: t.Union([SampleSummaryModel, t.Null()]),
  warnings: t.Array(t.String()),
})
export type PitchClaimedView = typeof PitchClaimedModel.static
