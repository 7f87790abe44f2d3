import type { EventDeclarations } from '../../kernel/events'

/** docs/ai.md: an AI job as webhooks see it (`result` left out: a translation may be a whole Story). */
export interface AiJobEventPayload {
  ai_job: { uuid: string; kind: string; status: string; target: Record<string, unknown>; error: string | null }
}

declare module '../../kernel/events' {
  interface EventMap {
    'ai_job.completed': AiJobEventPayload
    'ai_job.approved': AiJobEventPayload
    'ai_job.rejected': AiJobEventPayload
  }
}

const body = (p: unknown) => {
  const j = (p as AiJobEventPayload).ai_job
  return { ai_job: { uuid: j?.uuid ?? null, kind: j?.kind ?? null, status: j?.status ?? null, target: j?.target ?? null, error: j?.error ?? null } }
}

const AI_JOB = '`ai_job: {uuid, kind, status, target, error}` (`result` left out)'

export const aiEvents: EventDeclarations = {
  'ai_job.completed': { description: 'An AI job finished: awaiting review, or failed (`error`).', webhook: body, body: AI_JOB },
  'ai_job.approved': { description: 'An AI job was approved: its result was applied (new Story version, or alt text).', webhook: body, body: AI_JOB },
  'ai_job.rejected': { description: 'An AI job was rejected: its result was discarded.', webhook: body, body: AI_JOB },
}
