import { queryOptions } from '@tanstack/react-query'
import { api, unwrap } from '../../api/client'
import type { paths } from '../../api/schema'
import { getToken } from '../../auth'
import { queryKeys } from '../../api/keys'

export type EventItem = paths['/v1/spaces/{space}/events/{id}']['get']['responses'][200]['content']['application/json']['data']
export type EventInput = NonNullable<paths['/v1/spaces/{space}/events']['post']['requestBody']>['content']['application/json']
export type Registration = paths['/v1/spaces/{space}/events/{id}/registrations']['get']['responses'][200]['content']['application/json']['data'][number]
export type RegistrationStatus = 'confirmed' | 'waitlisted' | 'cancelled'
export type When = 'upcoming' | 'past'
export const PER_PAGE = 25

/** Query keys of the Events screen, each starting with the API path it reads. */
export const eventKeys = {
  all: (space: string) => queryKeys.events(space),
  list: (space: string, when: When, page: number) => [...eventKeys.all(space), 'list', when, page] as const,
  one: (space: string, id: string) => [...eventKeys.all(space), id] as const,
  registrations: (space: string, id: string, status: RegistrationStatus | 'all', page: number) => [...eventKeys.all(space), id, 'registrations', status, page] as const,
}

export const eventsQuery = (space: string, when: When, page: number) =>
  queryOptions({
    queryKey: eventKeys.list(space, when, page),
    queryFn: () => unwrap(api.GET('/v1/spaces/{space}/events', { params: { path: { space }, query: { when, page, per_page: PER_PAGE } } })),
  })

export const eventQuery = (space: string, id: string) =>
  queryOptions({
    queryKey: eventKeys.one(space, id),
    queryFn: async () => (await unwrap(api.GET('/v1/spaces/{space}/events/{id}', { params: { path: { space, id } } }))).data,
  })

export const registrationsQuery = (space: string, id: string, status: RegistrationStatus | 'all', page: number, perPage = PER_PAGE) =>
  queryOptions({
    queryKey: eventKeys.registrations(space, id, status, page),
    queryFn: () =>
      unwrap(
        api.GET('/v1/spaces/{space}/events/{id}/registrations', {
          params: { path: { space, id }, query: { page, per_page: perPage, ...(status === 'all' ? {} : { status }) } },
        }),
      ),
  })

/** A file the API answers to the signed-in user (CSV, ICS), saved through a temporary link. */
export async function download(path: string, filename: string): Promise<void> {
  const token = getToken()
  const res = await fetch(path, { headers: token ? { Authorization: `Bearer ${token}` } : {} })
  if (!res.ok) throw new Error(`${res.status}`)
  const url = URL.createObjectURL(await res.blob())
  const a = document.createElement('a')
  a.href = url
  a.download = filename
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

/** The offset of `tz` from UTC at the instant `ms`, in milliseconds. */
function offsetAt(ms: number, tz: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  )
  const asUtc = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second))
  return asUtc - Math.floor(ms / 1000) * 1000
}

/** An instant as `YYYY-MM-DDTHH:mm` on the wall clock of `tz` (what a datetime-local input holds). */
export function toLocalInput(iso: string | null | undefined, tz: string): string {
  if (!iso) return ''
  const ms = Date.parse(iso)
  if (Number.isNaN(ms)) return ''
  return new Date(ms + offsetAt(ms, tz)).toISOString().slice(0, 16)
}

/** A wall-clock `YYYY-MM-DDTHH:mm` in `tz` as an ISO instant (Z); '' when the input is empty or invalid. */
export function fromLocalInput(local: string, tz: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(local)) return ''
  const guess = Date.parse(`${local}:00Z`)
  let ms = guess - offsetAt(guess, tz)
  ms = guess - offsetAt(ms, tz)
  return new Date(ms).toISOString()
}

/** The platform's IANA time zones (with the browser's own and UTC first). */
export function timeZones(): string[] {
  const all = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone
  return [...new Set(['UTC', own, ...all])]
}
