import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/plugin'
import { Data, DataList, ErrorBody } from '../../kernel/schemas'
import { assertRegistrationOpen, type AuthState } from '../auth/service'
import { OnboardBody, OnboardedModel, PitchInviteeBody, PitchInviteeModel, PitchParams, TestAccountModel } from './model'
import { createPitchInvitee, deletePitchInvitee, listPitchInvitees, onboard, provisionTestAccount } from './service'

/** §4.7 `POST /onboard`, `GET /pitch-invitees` (and its POST and DELETE), `POST /pitch/{slug}/test-account`. */
export function onboardingRoutes(kernel: Kernel, guards: Guards, auth: AuthState) {
  return new Elysia({ tags: ['Onboarding'] })
    .use(guards)
    .post(
      '/onboard',
      async ({ body, set }) => {
        set.status = 201
        return { data: await onboard(kernel, auth, body) }
      },
      {
        // Before body validation, as sign-up: a closed door answers 403 whatever the body holds.
        transform: () => assertRegistrationOpen(kernel, auth),
        body: OnboardBody,
        response: { 201: Data(OnboardedModel), 403: ErrorBody },
        detail: {
          summary: 'Sign up a User, its Tenant and a first Space (admin) in one step, optionally with sample content',
          description:
            'Anonymous, 5 per 60 min per IP. User, Tenant, Space, the admin membership and the returned token are created in one transaction: a taken e-mail (409 `email_taken`) or Space slug (409 `slug_taken`) leaves nothing behind. Emits `space.created`. Obeys REGISTRATION exactly as `POST /auth/register` (refused: 403 `registration_closed`). With `sample_content: true` the Space also gets starter content — blueprints (page, post, author, text_block), a home page, a blog folder with two posts and an authors folder with one author, each in every locale and published (CDN, search and GraphQL answer at once), a `contact` form and a `site_facts` datasource. That step runs after the account committed, through the stories, forms and datasources services: if it fails, the answer is still 201, with `sample_content: null` and a `warnings` entry. The request log keeps no client address for this route.',
        },
      },
    )
    .get('/pitch-invitees', async ({ principal }) => ({ data: await listPitchInvitees(kernel, principal) }), {
      userToken: true,
      response: DataList(PitchInviteeModel),
      detail: {
        summary: "The pitch invitees (demo prospects) of the caller's Tenant, oldest first",
        description:
          "The caller's Tenant is the one of its user token (the Tenant the user signed up with, which the user owns: its admin). Space-scoped tokens get 403 `user_required`. At most 1,000 invitees per Tenant.",
      },
    })
    .post(
      '/pitch-invitees',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await createPitchInvitee(kernel, principal, body) }
      },
      {
        userToken: true,
        body: PitchInviteeBody,
        response: { 201: Data(PitchInviteeModel) },
        detail: {
          summary: "Add a pitch invitee to the caller's Tenant (its admin: a user token)",
          description:
            'The slug is unique across the service (the anonymous `POST /pitch/{slug}/test-account` names no Tenant): taken → 409 `pitch_invitee_exists`. Whoever knows the slug can provision the demo once, and the mail goes to the invitee\'s address only: choose slugs that are not easy to guess.',
        },
      },
    )
    .delete(
      '/pitch-invitees/:slug',
      async ({ principal, params, set }) => {
        await deletePitchInvitee(kernel, principal, params.slug)
        set.status = 204
      },
      {
        userToken: true,
        params: PitchParams,
        response: { 204: t.Void() },
        detail: {
          summary: "Delete a pitch invitee of the caller's Tenant; a live demo of it is closed at once (Spaces archived, tokens revoked)",
        },
      },
    )
    .post(
      '/pitch/:slug/test-account',
      async ({ params, set }) => {
        set.status = 201
        return { data: await provisionTestAccount(kernel, params.slug) }
      },
      {
        params: PitchParams,
        response: { 201: Data(TestAccountModel) },
        detail: {
          summary: 'Provision the demo account of a pitch invitee (anonymous; once per invitee)',
          description:
            "Anonymous, 10 per 60 min per IP. Creates a demo Tenant with one Space of sample content and a user for the invitee's e-mail, whatever REGISTRATION says (the Tenant admin's invitation admits it), and answers 201 with the user's token and the Space slug. The invitee gets a mail with the sign-in address (`{PUBLIC_URL}/admin/`) and a one-hour password link (no password travels by mail). Unknown slug: 404; provisioned already (also the loser of two calls at once): 409 `already_provisioned`; the address has an account: 409 `email_taken`; no PUBLIC_URL: 403 `pitch_unavailable`. The demo expires after PITCH_TTL_DAYS (default 14): a daily job archives its Spaces and revokes its tokens.",
        },
      },
    )
}
