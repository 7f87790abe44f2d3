import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data, DataList, ErrorBody, SpaceParams } from '../../kernel/schemas'
import { SignUpAcceptedModel } from '../auth/model'
import { assertRegistrationOpen, type AuthState, signUpAccepted } from '../auth/service'
import { OnboardBody, OnboardedModel, SampleSummaryModel, PitchClaimBody, PitchClaimedModel, PitchInviteeBody, PitchInviteeModel, PitchMailedModel, PitchParams } from './model'
import { seedEmptySpace } from './sample'
import { assertPitchDemosOn, claimPitchDemo, createPitchInvitee, deletePitchInvitee, listPitchInvitees, mailPitchLink, onboard } from './service'

const PITCH_MAILED = 'If the invitee can have a demo, a mail with a link to start it is on its way to their address.'

/**
 * §4.7 `POST /onboard`, `GET /pitch-invitees` (and its POST and DELETE), `POST /pitch/{slug}/test-account`, and
 * `POST /pitch/claim` (the mailed demo link).
 */
export function onboardingRoutes(kernel: Kernel, guards: Guards, auth: AuthState) {
  return new Elysia({ tags: ['Onboarding'] })
    .use(guards)
    .post(
      '/onboard',
      async ({ body, set }) => {
        const outcome = await onboard(kernel, auth, body)
        if (outcome.created) {
          set.status = 201
          return { data: outcome.view }
        }
        set.status = 202
        return { data: signUpAccepted(kernel) }
      },
      {
        // Before body validation, as sign-up: a closed door answers 403 whatever the body holds.
        transform: () => assertRegistrationOpen(kernel, auth),
        body: OnboardBody,
        response: { 201: Data(OnboardedModel), 202: Data(SignUpAcceptedModel), 403: ErrorBody },
        detail: {
          summary: 'Sign up a User, its Tenant and a first Space (admin) in one step, optionally with sample content',
          description:
            'Anonymous, 5 per 60 min per IP. A sign-up exactly as `POST /auth/register` (REGISTRATION, REGISTRATION_VERIFY, the same answer whatever the address), whose account comes with a first Space. The first account of the service is made at once: User, Tenant, Space, the admin membership and the returned token in one transaction, 201. Every later sign-up answers 202 with the body of `POST /auth/register`: the Space follows the account when it is made (at once with REGISTRATION_VERIFY=off, else when the mailed link is followed; a slug taken in between becomes a warning of the confirmation). A Space slug taken now: 409 `slug_taken`, nothing made. Emits `space.created`. With `sample_content: true` the Space also gets starter content — blueprints (page, post, author, text_block), a home page, a blog folder with two posts and an authors folder with one author, each in every locale and published (CDN, search and GraphQL answer at once), a `contact` form and a `site_facts` datasource. That step runs after the account committed, through the stories, forms and datasources services: if it fails, the account and Space stay, with `sample_content: null` and a `warnings` entry. The request log keeps no client address for this route.',
        },
      },
    )
    .post(
      '/spaces/:space/sample-content',
      async ({ access, set }) => {
        set.status = 201
        return { data: await seedEmptySpace(kernel, access) }
      },
      {
        params: SpaceParams,
        spaceRole: 'admin',
        response: { 201: Data(SampleSummaryModel), 409: ErrorBody },
        detail: {
          summary: 'Write the starter content of onboarding into an existing Space (admin)',
          description:
            'The set `POST /onboard {sample_content: true}` writes: blueprints (page, post, author, text_block), a home page, a blog folder with two posts and an authors folder with one author, each in every locale of the Space and published, a `contact` form and a `site_facts` datasource (webhook_push, two entries) the home page reads a marker from. Only into a Space holding nothing it would collide with: a Space with any Story (archived ones too), a blueprint named like a sample one, a form `contact` or a datasource `site_facts` answers 409 `conflict` (the message says what is in the way) and nothing is written, so a second call never duplicates. Each piece is written through its service (validated, versioned, published, announced to search, the CDN cache and webhooks).',
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
        response: { 201: Data(PitchInviteeModel), 403: ErrorBody },
        detail: {
          summary: "Add a pitch invitee to the caller's Tenant (its admin: a user token)",
          description:
            'Needs PITCH_DEMOS=on and PUBLIC_URL (else 403 `pitch_unavailable`). The slug is unique across the service (the anonymous `POST /pitch/{slug}/test-account` names no Tenant): taken → 409 `pitch_invitee_exists`. Whoever knows the slug can have the demo link mailed, and it goes to the invitee\'s address only.',
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
        await mailPitchLink(kernel, params.slug)
        set.status = 202
        return { data: { message: PITCH_MAILED } }
      },
      {
        // Before the slug is looked at: with demos off, every slug answers the same 403.
        transform: () => void assertPitchDemosOn(kernel),
        params: PitchParams,
        response: { 202: Data(PitchMailedModel), 403: ErrorBody },
        detail: {
          summary: 'Mail a pitch invitee the link that starts their demo (anonymous)',
          description:
            "Anonymous, 10 per 60 min per IP, 3 mails per hour per invitee. Needs PITCH_DEMOS=on and PUBLIC_URL (else 403 `pitch_unavailable`, for every slug). Makes nothing and returns no token: it mails the invitee's address a link `{PUBLIC_URL}/pitch-demo/{token}` (once, 7 days; a new call replaces it), and following it makes the demo (`POST /v1/pitch/claim`). An address that has an account gets a mail saying a demo needs another address instead. The answer is the same 202 in every case. Unknown slug: 404; provisioned already: 409 `already_provisioned`.",
        },
      },
    )
    .post(
      '/pitch/claim',
      async ({ body, set }) => {
        set.status = 201
        return { data: await claimPitchDemo(kernel, body) }
      },
      {
        transform: () => void assertPitchDemosOn(kernel),
        body: PitchClaimBody,
        response: { 201: Data(PitchClaimedModel), 403: ErrorBody, 409: ErrorBody, 422: ErrorBody },
        detail: {
          summary: 'Start a pitch demo with the token from its mailed link and a password of your choice',
          description:
            "Anonymous (the mailed link is the proof), 10 per 60 min per IP. Once per invitee, in one transaction: a demo Tenant, a user for the invitee's address with this password (whatever REGISTRATION says), a Space `{slug}-demo-{6 hex}` (admin), then sample content (a failure there is a `warnings` entry). No token is returned: the invitee signs in. Unknown, used, replaced or expired token: 422 `pitch_link_invalid`; the address has an account: 409 `email_taken`, nothing made; PITCH_DEMOS off: 403 `pitch_unavailable`. The demo ends after PITCH_TTL_DAYS (default 14): a daily job archives its Spaces and revokes its tokens, and sign-in is refused until the user resets the password by mail, which makes it an ordinary account.",
        },
      },
    )
}
