import { Elysia, t } from 'elysia'
import { KernelErrors } from '../../kernel/errors'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import type { RequestInfo } from '../../kernel/request-front'
import { Data, DataList, honeypotFirst, Paged, SpaceParams } from '../../kernel/schemas'
import type { FormCache } from './cache'
import {
  FormBody,
  FormListQuery,
  FormModel,
  FormParams,
  HoneypotAnswer,
  SubmissionListQuery,
  SubmissionModel,
  SubmissionParams,
  SubmitAccepted,
  SubmitBody,
  SubmitParams,
  SubmitQuery,
} from './model'
import type { Validators } from './schema'
import { archiveForm, createForm, getForm, listForms, listSubmissions, rotateFormSecret, submissionsCsv, toggleSpam, updateForm } from './service'
import { type DailySalts, submitForm } from './submit'
import type { SubmissionWriter } from './writer'

const NoContent = t.Void({ description: 'No content' })

/** Spec 4.12: forms (viewer+ reads, editor+ writes) and their submissions (personal data: admin). */
export function formRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space/forms', tags: ['Forms'] })
    .use(guards)
    .get('', async ({ access, query }) => ({ data: await listForms(kernel, access, query.include_archived === '1') }), {
      params: SpaceParams,
      query: FormListQuery,
      spaceRole: 'viewer',
      response: DataList(FormModel),
      detail: { summary: 'List forms, newest first (archived ones only with include_archived=1)' },
    })
    .post(
      '',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createForm(kernel, access, body) }
      },
      {
        params: SpaceParams,
        body: FormBody,
        spaceRole: 'editor',
        response: { 201: Data(FormModel) },
        detail: {
          summary: 'Create a form',
          description:
            '`slug` is unique among the Space’s live forms (409 slug_taken). `fields`: 1–100, unique `key`s; select and radio need `options`. `compiled_schema` is compiled from `fields` (JSON Schema 2020-12) and read-only. `email` needs `notification_email`, `webhook` needs `webhook_url` (http(s), outbound policy), `lead` needs a field of type email. `success_message` keys must be locales of the Space. A `webhook` form gets a signing secret, in `secret` of this answer only.',
        },
      },
    )
    .get('/:uuid', async ({ access, params }) => ({ data: await getForm(kernel, access, params.uuid) }), {
      params: FormParams,
      spaceRole: 'viewer',
      response: Data(FormModel),
      detail: { summary: 'One form (archived ones too)' },
    })
    .put('/:uuid', async ({ access, params, body }) => ({ data: await updateForm(kernel, access, params.uuid, body) }), {
      params: FormParams,
      body: FormBody,
      spaceRole: 'editor',
      response: Data(FormModel),
      detail: {
        summary: 'Replace a form’s definition',
        description: 'Same rules as create. `spam_config.secret` may be left out to keep the stored one (same provider). A switch to `webhook` creates a signing secret, shown in `secret` of this answer. Archived forms: 404.',
      },
    })
    .delete(
      '/:uuid',
      async ({ access, params, set }) => {
        await archiveForm(kernel, access, params.uuid)
        set.status = 204
      },
      {
        params: FormParams,
        spaceRole: 'editor',
        response: { 204: NoContent },
        detail: { summary: 'Archive a form (soft delete)', description: 'The public submit answers 404 from now on; listings hide it unless include_archived=1; submissions are kept.' },
      },
    )
    .post('/:uuid/rotate-secret', async ({ access, params }) => ({ data: await rotateFormSecret(kernel, access, params.uuid) }), {
      params: FormParams,
      spaceRole: 'editor',
      response: Data(FormModel),
      detail: { summary: 'New webhook signing secret (shown once, in `secret`)', description: 'Webhook forms only (otherwise 422). Deliveries from now on are signed with it.' },
    })
    .get('/:uuid/submissions', ({ access, params, query }) => listSubmissions(kernel, access, params.uuid, query), {
      params: FormParams,
      query: SubmissionListQuery,
      spaceRole: 'admin',
      response: Paged(SubmissionModel),
      detail: {
        summary: 'Submissions, newest first',
        description: '`per_page` 1–100 (default 25), `page` from 1; spam rows only with include_spam=1; `spam=only`: the spam rows alone. `q` matches part of any stored value (case-insensitive).',
      },
    })
    .get(
      '/:uuid/submissions.csv',
      async ({ access, params }) => {
        const { slug, stream } = await submissionsCsv(kernel, access, params.uuid)
        return new Response(stream, {
          headers: {
            'Content-Type': 'text/csv; charset=utf-8',
            'Content-Disposition': `attachment; filename="${slug}-submissions.csv"`,
            'cache-control': 'no-store',
          },
        })
      },
      {
        params: FormParams,
        spaceRole: 'admin',
        detail: {
          summary: 'Export submissions as CSV (streamed)',
          description:
            'Columns: each field key in definition order (file fields left out), then submitted_at, uuid, spam_score. Spam rows are left out. UTF-8 with BOM, RFC 4180 quoting, CRLF; read and sent in batches of 1000. Field cells beginning with = + - @, tab or CR get a leading apostrophe (spreadsheet formula injection). A consent cell is true or false.',
          responses: { 200: { description: 'CSV', content: { 'text/csv': { schema: { type: 'string' } } } } },
        },
      },
    )
    .post('/:uuid/submissions/:submissionUuid/spam', async ({ access, params }) => ({ data: await toggleSpam(kernel, access, params.uuid, params.submissionUuid) }), {
      params: SubmissionParams,
      spaceRole: 'admin',
      response: Data(SubmissionModel),
      detail: { summary: 'Toggle the spam flag of a submission', description: 'Spam rows are hidden from the listing (unless include_spam=1) and left out of the CSV. An action already run is not undone.' },
    })
}

const SUBMIT_DESCRIPTION = `Spec 4.6. Anonymous; \`Content-Type: application/json\`.

1. \`_hp\` non-empty: 200 \`{ok: true}\`, nothing stored, no action — checked first, before the body is validated and the form looked up.
2. \`data\` keeps the form's keys only (unknown keys are dropped); values are coerced to scalars (number fields to
   numbers, checkbox and consent to booleans, others to strings), markup tags are stripped, strings trimmed and cut at
   5000 characters; then validated against \`compiled_schema\`: 422 \`{error: 'validation_failed', errors: {<key>: [...]}}\`.
   A consent field is stored as \`{accepted, text}\` with the label shown.
3. With a \`spam_provider\`, \`captcha_token\` is verified with the provider: failure → 422 \`captcha_failed\`, nothing stored.
4. Limits: 20/min/IP on the route; and the form's \`rate_limit_per_ip\` stored submissions per UTC day per IP hash →
   429 \`rate_limited\` with \`Retry-After\` = the seconds left until the end of that UTC day.
5. Privacy: the IP is never stored: \`ip_hash\` = SHA-256(daily random salt, Space, IP), the salt deleted after two
   days; \`ua_hash\` 16 hex of SHA-256(User-Agent); the referrer cut to scheme and host.
6. \`spam_score\` 0–1 (links, stripped markup, repeated characters, a submit < 2 s after \`rendered_at\`); ≥ 0.8 flags
   spam: stored, no action.
7. 201 \`{data: {ok, submission_uuid, success_message, redirect_url}}\`; \`success_message\` in \`?lang\` /
   Accept-Language, falling back to the Space default locale. The action (email, webhook, lead) runs afterwards as a
   durable job.`

/** The public submit (spec 4.6). */
export function formCdnRoutes(
  kernel: Kernel,
  guards: Guards,
  deps: { forms: FormCache; salts: DailySalts; validators: Validators; writer: SubmissionWriter },
  requestInfo: (request: Request) => RequestInfo,
) {
  return new Elysia({ prefix: '/cdn/:space/forms', tags: ['Public forms'] }).use(guards).post(
    '/:slug',
    async ({ space, origin, params, query, body, request, set }) => {
      set.headers['cache-control'] = 'no-store'
      const form = await deps.forms.get(space.id, params.slug)
      if (!form) throw KernelErrors.notFound('Form not found.')
      const out = await submitForm(kernel, deps, space, form, body, {
        ip: requestInfo(request).ip,
        userAgent: request.headers.get('user-agent'),
        referer: request.headers.get('referer'),
        acceptLanguage: request.headers.get('accept-language'),
        lang: query.lang,
        base: origin,
      })
      if (out.honeypot) {
        set.status = 200
        return { ok: true }
      }
      set.status = 201
      return { data: { ok: true, submission_uuid: out.submission_uuid, success_message: out.success_message, redirect_url: out.redirect_url } }
    },
    {
      // The honeypot before anything else (spec 4.6): before the body's validation, the Space and the form.
      transform: honeypotFirst(200, { ok: true }),
      // An unknown Space reads like an unknown form.
      publicSpace: { notFound: 'Form' },
      params: SubmitParams,
      query: SubmitQuery,
      body: SubmitBody,
      response: { 200: HoneypotAnswer, 201: SubmitAccepted },
      detail: { summary: 'Submit a form', description: SUBMIT_DESCRIPTION },
    },
  )
}
