import type { EventDeclarations } from '../../kernel/events'

export interface MemberPayload {
  member: { user_id: number; email: string; name: string; role: 'viewer' | 'editor' | 'admin' }
  /** The role before a change (role_changed only). */
  previous_role?: 'viewer' | 'editor' | 'admin'
  by: { user_id: number | null }
}

declare module '../../kernel/events' {
  interface EventMap {
    'member.added': MemberPayload
    'member.removed': MemberPayload
    'member.role_changed': MemberPayload
  }
}

const body = (p: MemberPayload) => ({
  member: { user_id: p.member.user_id, email: p.member.email, name: p.member.name, role: p.member.role },
  ...(p.previous_role ? { previous_role: p.previous_role } : {}),
  by: { user_id: p.by.user_id },
})

const MEMBER = '`member: {user_id, email, name, role}`'
const BY = '`by: {user_id}` (who did it; null when no person did)'

export const memberEvents: EventDeclarations = {
  'member.added': { description: 'Someone became a member of the Space (an accepted invitation).', webhook: body, body: `${MEMBER}, ${BY}` },
  'member.removed': { description: 'A member left the Space or was removed; their access ended at once.', webhook: body, body: `${MEMBER}, ${BY}` },
  'member.role_changed': { description: "A member's role in the Space changed.", webhook: body, body: `${MEMBER} (the new role), \`previous_role\`, ${BY}` },
}
