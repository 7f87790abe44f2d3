import { index, integer, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { tenants, users } from '../../kernel/tables'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/**
 * Pitch invitees (onboarding module): prospects a Tenant invites to try the service. The slug is global (the anonymous
 * `POST /v1/pitch/{slug}/test-account` names no Tenant). Provisioning sets `provisioned_at`, `expires_at` and the demo
 * Tenant once (a conditional update: one winner); the daily job (or a delete) sets `ended_at` when it closed the demo.
 * The anonymous call only mails the invitee a link (`claim_token_hash`: SHA-256 of its 32 random bytes, good until
 * `claim_expires_at`); following it creates the demo account. A password reset of the demo user after the demo ended
 * sets `released_at`: the account is an ordinary one from then on.
 */
export const pitchInvitees = pgTable(
  'pitch_invitees',
  {
    id: serial('id').primaryKey(),
    tenantId: integer('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    /** Lower-cased. */
    email: text('email').notNull(),
    createdBy: integer('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: ts('created_at').notNull(),
    provisionedAt: ts('provisioned_at'),
    expiresAt: ts('expires_at'),
    demoTenantId: integer('demo_tenant_id').references(() => tenants.id, { onDelete: 'set null' }),
    demoSpaceSlug: text('demo_space_slug'),
    endedAt: ts('ended_at'),
    /** Deleted by its Tenant after provisioning: hidden, its demo closed; the row stays so the demo user stays signed out. */
    deletedAt: ts('deleted_at'),
    /** SHA-256 of the token of the last link mailed to the invitee (null: none, or used). */
    claimTokenHash: text('claim_token_hash'),
    claimExpiresAt: ts('claim_expires_at'),
    /** The ended demo's user reset their password: an ordinary account since, no longer refused at sign-in. */
    releasedAt: ts('released_at'),
  },
  (t) => [
    uniqueIndex('pitch_invitees_slug_key').on(t.slug),
    index('pitch_invitees_tenant_idx').on(t.tenantId),
    index('pitch_invitees_expires_idx').on(t.expiresAt),
    index('pitch_invitees_demo_tenant_idx').on(t.demoTenantId),
    uniqueIndex('pitch_invitees_claim_key').on(t.claimTokenHash),
  ],
)
