import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data, Paged, SpaceParams } from '../../kernel/schemas'
import { publicOrigin } from '../../kernel/http'
import { EventBody, EventListQuery, EventModel, EventParams, RegistrationListQuery, RegistrationModel, RegistrationParams } from './model'
import {
  cancelRegistrationAsEditor,
  createEvent,
  deleteEvent,
  eventIcsAsEditor,
  getEvent,
  listEvents,
  listRegistrations,
  registrationsCsv,
  updateEvent,
} from './service'

const NoContent = t.Void({ description: 'No content' })

const BODY_RULES =
  '`slug` unique in the Space (409 slug_taken). `title` and `description`: locale maps whose keys are locales of the Space; `title` needs one non-empty text. `starts_at`, `ends_at`: ISO 8601 instants with Z or an offset, `ends_at` after `starts_at`. `timezone`: an IANA name (e.g. Europe/Berlin). `location.url`: http(s). `capacity`: null = unlimited. `fields`: a JSON Schema (2020-12) with `type: object` for extra registration values; it must compile (Ajv).'

/** Events management: viewer+ reads, editor+ writes; registrations are personal data (admin). */
export function eventRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space/events', tags: ['Events'] })
    .use(guards)
    .get('', ({ access, query }) => listEvents(kernel, access, query), {
      params: SpaceParams,
      query: EventListQuery,
      spaceRole: 'viewer',
      response: Paged(EventModel),
      detail: { summary: 'List events, soonest start first', description: '`when=upcoming|past` (past: latest first); `per_page` 1–100 (default 25), `page` from 1.' },
    })
    .post(
      '',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createEvent(kernel, access, body) }
      },
      { params: SpaceParams, body: EventBody, spaceRole: 'editor', response: { 201: Data(EventModel) }, detail: { summary: 'Create an event', description: BODY_RULES } },
    )
    .get('/:id', async ({ access, params }) => ({ data: await getEvent(kernel, access, params.id) }), {
      params: EventParams,
      spaceRole: 'viewer',
      response: Data(EventModel),
      detail: { summary: 'One event' },
    })
    .get(
      '/:id/event.ics',
      async ({ access, params, request }) => {
        const { slug, ics } = await eventIcsAsEditor(kernel, access, params.id, publicOrigin(kernel.config, request.url))
        return new Response(ics, {
          headers: { 'Content-Type': 'text/calendar; charset=utf-8', 'Content-Disposition': `attachment; filename="${slug}.ics"`, 'cache-control': 'no-store' },
        })
      },
      {
        params: EventParams,
        spaceRole: 'viewer',
        detail: {
          summary: 'The event’s calendar file (ICS), published or not',
          description: 'RFC 5545, as a registration’s calendar file: the same UID and SEQUENCE, texts in the Space’s default language (else the first one written), STATUS CONFIRMED. For the editor to check or share before the event goes public.',
          responses: { 200: { description: 'The calendar file', content: { 'text/calendar': { schema: { type: 'string' } } } } },
        },
      },
    )
    .put('/:id', async ({ access, params, body }) => ({ data: await updateEvent(kernel, access, params.id, body) }), {
      params: EventParams,
      body: EventBody,
      spaceRole: 'editor',
      response: Data(EventModel),
      detail: {
        summary: 'Replace an event',
        description: `${BODY_RULES} Every change bumps \`sequence\` (the ICS SEQUENCE, so calendars update). With a waitlist, more capacity promotes the first in line (each gets a mail).`,
      },
    })
    .delete(
      '/:id',
      async ({ access, params, set }) => {
        await deleteEvent(kernel, access, params.id)
        set.status = 204
      },
      { params: EventParams, spaceRole: 'editor', response: { 204: NoContent }, detail: { summary: 'Delete an event and its registrations' } },
    )
    .get('/:id/registrations', ({ access, params, query }) => listRegistrations(kernel, access, params.id, query), {
      params: EventParams,
      query: RegistrationListQuery,
      spaceRole: 'admin',
      response: Paged(RegistrationModel),
      detail: { summary: 'Registrations of an event, in order of arrival', description: '`per_page` 1–100 (default 25), `page` from 1; `status` filters.' },
    })
    .get(
      '/:id/registrations.csv',
      async ({ access, params }) => {
        const { slug, stream } = await registrationsCsv(kernel, access, params.id)
        return new Response(stream, {
          headers: {
            'Content-Type': 'text/csv; charset=utf-8',
            'Content-Disposition': `attachment; filename="${slug}-registrations.csv"`,
            'cache-control': 'no-store',
          },
        })
      },
      {
        params: EventParams,
        spaceRole: 'admin',
        detail: {
          summary: 'Export registrations as CSV (streamed)',
          description:
            'Columns: id, status, name, email, lang, registered_at, promoted_at, cancelled_at, then one per property of the event’s `fields` schema. Every registration (cancelled ones too), in order of arrival. UTF-8 with BOM, RFC 4180 quoting, CRLF; read and sent in batches of 1000. Text cells beginning with = + - @, tab or CR get a leading apostrophe (spreadsheet formula injection).',
          responses: { 200: { description: 'CSV', content: { 'text/csv': { schema: { type: 'string' } } } } },
        },
      },
    )
    .post(
      '/:id/registrations/:registrationId/cancel',
      async ({ access, params }) => ({ data: await cancelRegistrationAsEditor(kernel, access, params.id, params.registrationId) }),
      {
        params: RegistrationParams,
        spaceRole: 'admin',
        response: Data(RegistrationModel),
        detail: {
          summary: 'Cancel a registration',
          description: 'Idempotent (a cancelled registration is answered as it is). A confirmed spot goes to the first waitlisted registration, who gets a mail. Fires `event.registration_cancelled` with `by: editor`.',
        },
      },
    )
}
