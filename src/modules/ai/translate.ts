import { and, eq, inArray } from 'drizzle-orm'
import { aiJobs } from './tables'
import { AppError } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import type { JobContext, JobQueue } from '../../kernel/jobs'
import type { Kernel } from '../../kernel/kernel'
import type { Doc } from '../stories/blocks'
import { spaceBlueprints } from '../stories/service'
import { allBlocks, asData, parseJsonAnswer, protectMarkers, type TextSlot, textSlots } from './content'
import './jobs'
import type { Usage } from './provider'
import { type AiState, checkBudget, eventOf, PROMPTS, recordUsage } from './service'

export const TRANSLATE_QUEUE = 'ai.translate' as const

/**
 * One translation job: the Story's name, then each block (nested ones too) in one model call per block, sending only
 * that block's translatable texts (markers swapped for placeholders). Answers missing a key, or losing a
 * placeholder, keep the source text for that field (listed in `result.kept`). The result waits for review; nothing
 * is saved until an editor approves it. A job running past its time (AI job time, 10 min) is failed by the job queue
 * (the queue's `timeoutMs`): `ctx.signal` aborts the model call in flight and `failTimedOut` records the failure.
 */
async function runTranslation(kernel: Kernel, self: AiState, ctx: JobContext<{ aiJobId: number; source?: { name: string; content: unknown } }>) {
  const { aiJobId, source } = ctx.job.payload
  ctx.keepPayload({ aiJobId })
  const now = kernel.clock.now()
  const [row] = await kernel.db.db
    .update(aiJobs)
    .set({ status: 'running', updatedAt: now })
    .where(and(eq(aiJobs.id, aiJobId), inArray(aiJobs.status, ['queued', 'running'])))
    .returning()
  if (!row || !source) {
    await kernel.db.db.transaction((tx) => ctx.settle(tx, { status: 'done' }))
    return
  }
  const target = row.target as { target_lang: string; source_lang: string }
  const deadline = ctx.signal
  const totals: Usage = { prompt_tokens: 0, completion_tokens: 0 }
  const kept: string[] = []
  let outcome: { status: 'awaiting_review'; result: Record<string, unknown> } | { status: 'failed'; error: string }
  try {
    const blueprints = await spaceBlueprints(kernel, row.spaceId)
    const content = structuredClone(source.content) as Doc
    const name = { value: source.name }
    const units: { id: string; slots: TextSlot[] }[] = [
      { id: 'name', slots: [{ key: 'name', get: () => name.value, set: (v) => void (name.value = v) }] },
      ...allBlocks(content, blueprints).map((b) => ({ id: b._uid, slots: textSlots(b, blueprints) })),
    ]
    for (const unit of units) {
      if (!unit.slots.length) continue
      if (deadline.aborted) throw new Error('deadline')
      await checkBudget(kernel, row.spaceId)
      const protectedTexts = unit.slots.map((s) => protectMarkers(s.get()))
      const texts = Object.fromEntries(unit.slots.map((s, i) => [s.key, protectedTexts[i].text]))
      const answer = await self.provider.complete(
        {
          messages: [
            { role: 'system', content: PROMPTS.translate },
            { role: 'user', content: `Source language: ${target.source_lang}\nTarget language: ${target.target_lang}\n${asData(texts)}` },
          ],
        },
        deadline,
      )
      totals.prompt_tokens += answer.usage.prompt_tokens
      totals.completion_tokens += answer.usage.completion_tokens
      await recordUsage(kernel, row.spaceId, answer.usage)
      const out = parseJsonAnswer(answer.text) as Record<string, unknown> | undefined
      unit.slots.forEach((s, i) => {
        const v = out && typeof out === 'object' && !Array.isArray(out) ? out[s.key] : undefined
        const restored = typeof v === 'string' && v.trim() ? protectedTexts[i].restore(v) : null
        if (restored === null) kept.push(`${unit.id}.${s.key}`)
        else s.set(restored)
      })
    }
    outcome = { status: 'awaiting_review', result: { name: name.value, content, kept } }
  } catch (err) {
    const timedOut = deadline.aborted
    outcome = {
      status: 'failed',
      error: timedOut
        ? timedOutMessage(kernel)
        : err instanceof AppError
          ? `${err.code}: ${err.message}`
          : 'The translation failed.',
    }
    if (!(err instanceof AppError) && !timedOut) kernel.logger.warn('AI translation failed', { job: aiJobId, error: (err as Error).message })
  }
  await transact(kernel, async (tx, emit) => {
    const [done] = await tx
      .update(aiJobs)
      .set({
        status: outcome.status,
        result: outcome.status === 'awaiting_review' ? outcome.result : null,
        error: outcome.status === 'failed' ? outcome.error.slice(0, 2000) : null,
        promptTokens: totals.prompt_tokens,
        completionTokens: totals.completion_tokens,
        updatedAt: kernel.clock.now(),
      })
      .where(and(eq(aiJobs.id, aiJobId), eq(aiJobs.status, 'running')))
      .returning()
    if (done) emit({ type: 'ai_job.completed', spaceId: done.spaceId, payload: eventOf(done) })
    await ctx.settle(tx, outcome.status === 'failed' ? { status: 'failed', error: outcome.error } : { status: 'done' })
  })
}

const timedOutMessage = (kernel: Kernel) => `The translation ran past ${Math.round(kernel.config.aiJobMaxMs / 60_000)} minutes and was stopped.`

/**
 * The queue failed the job for its time (on this instance, or on another one that found its lease expired): the AI
 * job fails too, unless it already settled, and `ai_job.completed` tells webhooks.
 */
async function failTimedOut(kernel: Kernel, aiJobId: number) {
  await transact(kernel, async (tx, emit) => {
    const [done] = await tx
      .update(aiJobs)
      .set({ status: 'failed', result: null, error: timedOutMessage(kernel), updatedAt: kernel.clock.now() })
      .where(and(eq(aiJobs.id, aiJobId), inArray(aiJobs.status, ['queued', 'running'])))
      .returning()
    if (done) emit({ type: 'ai_job.completed', spaceId: done.spaceId, payload: eventOf(done) })
  })
}

export function registerAiJobs(jobs: JobQueue, self: AiState, kernel: Kernel) {
  // One at a time per instance: a translation is many model calls, and on the embedded database it shares the one
  // connection with requests.
  jobs.define(TRANSLATE_QUEUE, {
    concurrency: 1,
    timeoutMs: kernel.config.aiJobMaxMs,
    handler: (ctx) => runTranslation(kernel, self, ctx),
    onTimeout: (job) => failTimedOut(kernel, job.payload.aiJobId),
  })
}
