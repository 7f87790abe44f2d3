import { Elysia } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data, Paged, SpaceParams } from '../../kernel/schemas'
import {
  AiJobListQuery,
  AiJobModel,
  AiJobParams,
  AltTextBody,
  InsightsAnswer,
  InsightsBody,
  LinksAnswer,
  SeoAnswer,
  StatusAnswer,
  StoryLangBody,
  TextAnswer,
  TextBody,
  TranslateBody,
} from './model'
import {
  type AiState,
  aiStatus,
  approveAiJob,
  generateText,
  getAiJob,
  internalLinks,
  listAiJobs,
  rejectAiJob,
  requestTranslation,
  seoMeta,
  storyInsights,
  streamText,
  suggestAltText,
} from './service'

const PRIVACY = ' What is sent to the model: docs/ai.md (privacy).'

/** Spec 4.8: AI actions (editor+) and AI jobs (viewer+ reads, editor+ decisions). */
export function aiRoutes(kernel: Kernel, guards: Guards, self: AiState) {
  const actions = new Elysia({ prefix: '/spaces/:space/ai', tags: ['AI'] })
    .use(guards)
    .get('/status', async ({ access }) => ({ data: await aiStatus(kernel, self, access) }), {
      params: SpaceParams,
      spaceRole: 'viewer',
      response: StatusAnswer,
      detail: { summary: 'Whether AI is configured, the models, and this Space’s use this month against its token budget' },
    })
    .post('/text', async ({ access, body }) => ({ data: await generateText(kernel, self, access, body) }), {
      params: SpaceParams,
      body: TextBody,
      spaceRole: 'editor',
      response: TextAnswer,
      detail: {
        summary: 'Generate text from an instruction (optionally about a Story)',
        description: `\`prompt\` is the instruction (≤ 8,000 characters); with \`context.story_uuid\` the Story's text (in \`context.lang\`) is passed to the model as data. 503 ai_unavailable without AI_BASE_URL/AI_MODEL; 429 ai_budget_exhausted; 502/504 from the provider.${PRIVACY}`,
      },
    })
    .post('/stream-text', async ({ access, body, request, server }) => {
      const stream = await streamText(kernel, self, access, body, request.signal)
      // Tokens may pause longer than the idle timeout: the provider call's own 60 s deadline governs the stream.
      server?.timeout(request, 0)
      return new Response(stream, {
        headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' },
      })
    }, {
      params: SpaceParams,
      body: TextBody,
      spaceRole: 'editor',
      detail: {
        summary: 'Generate text as it is written (Server-Sent Events)',
        description:
          'Same body as `ai/text`. `data: {"text": "…"}` per chunk, then `event: done` with `data: {"usage": {prompt_tokens, completion_tokens}}`, or `event: error` with `data: {error, message}` when the provider fails mid-stream. Errors before the stream opens are JSON (503, 429, 404, 422, 502, 504). Closing the connection cancels the request to the provider.',
        responses: { 200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } } },
      },
    })
    .post(
      '/alt-text',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await suggestAltText(kernel, self, access, body) }
      },
      {
        params: SpaceParams,
        body: AltTextBody,
        spaceRole: 'editor',
        response: { 201: Data(AiJobModel) },
        detail: {
          summary: 'Suggest an image’s alt text for a locale (an AI job awaiting review)',
          description: `Uses AI_VISION_MODEL (503 without it). The image is sent as a JPEG reduced to fit 1024×1024 px (a data URL), never the original. The answer is an AI job (kind alt_text, status awaiting_review, \`result.alt\`); approving it writes the alt text for \`lang\`. Not a raster image: 422 invalid_image; \`lang\` not a Space locale: 422.${PRIVACY}`,
        },
      },
    )
    .post('/seo-meta', async ({ access, body }) => ({ data: await seoMeta(kernel, self, access, body) }), {
      params: SpaceParams,
      body: StoryLangBody,
      spaceRole: 'editor',
      response: SeoAnswer,
      detail: {
        summary: 'Suggest an SEO title (≤ 60 characters) and description (≤ 160) for a Story',
        description: `Reads the Story in \`lang\` (default: its own). Longer suggestions are cut at a word boundary. Nothing is saved.${PRIVACY}`,
      },
    })
    .post('/internal-links', async ({ access, body }) => {
      const r = await internalLinks(kernel, self, access, body)
      return { data: r.data, meta: { usage: r.usage } }
    }, {
      params: SpaceParams,
      body: StoryLangBody,
      spaceRole: 'editor',
      response: LinksAnswer,
      detail: {
        summary: 'Suggest internal links: published Stories of this Space, ranked by the model',
        description: `Candidates come from this Space's own search index (published Stories in \`lang\`, never the Story itself), found by the Story's keywords; the model ranks them and picks the phrase to link. At most 10, best first. Nothing is saved.${PRIVACY}`,
      },
    })
    .post('/story-insights', async ({ access, body }) => ({ data: await storyInsights(kernel, self, access, body) }), {
      params: SpaceParams,
      body: InsightsBody,
      spaceRole: 'editor',
      response: InsightsAnswer,
      detail: {
        summary: 'Observations on a Story from its content and its analytics',
        description:
          'Statistical observations (views over the last 30 days against the 30 before, top language, device and referrer, missing translations, length, publish state) always, without a model; with AI configured (and budget left) the model adds up to 5 of its own (`kind: model`).',
      },
    })
    .post(
      '/translate',
      async ({ access, body, set }) => {
        set.status = 202
        return { data: await requestTranslation(kernel, self, access, body) }
      },
      {
        params: SpaceParams,
        body: TranslateBody,
        spaceRole: 'editor',
        response: { 202: Data(AiJobModel) },
        detail: {
          summary: 'Translate a Story into another locale (an AI job, run in the background)',
          description: `Answers 202 with the AI job (kind translate, status queued). A worker translates the Story's name and each block's text, textarea, richtext and markdown fields (not those marked \`translatable: false\`), keeping \`_uid\`s, structure, numbers, asset and link fields and \`$ds:\` markers untouched; the job then awaits review (\`result: {name, content, kept}\`). Approving saves it as a new version of \`target_lang\`.${PRIVACY}`,
        },
      },
    )

  const jobs = new Elysia({ prefix: '/spaces/:space/ai-jobs', tags: ['AI'] })
    .use(guards)
    .get('', async ({ access, query }) => listAiJobs(kernel, access, query), {
      params: SpaceParams,
      query: AiJobListQuery,
      spaceRole: 'viewer',
      response: Paged(AiJobModel),
      detail: { summary: 'List AI jobs, newest first (filter by status and kind)' },
    })
    .get('/:aiJob', async ({ access, params }) => ({ data: await getAiJob(kernel, access, params.aiJob) }), {
      params: AiJobParams,
      spaceRole: 'viewer',
      response: Data(AiJobModel),
      detail: { summary: 'One AI job' },
    })
    .post('/:aiJob/approve', async ({ access, params }) => ({ data: await approveAiJob(kernel, access, params.aiJob) }), {
      params: AiJobParams,
      spaceRole: 'editor',
      response: Data(AiJobModel),
      detail: {
        summary: 'Approve an AI job: apply its result',
        description:
          'In one transaction: a translation becomes a new Story version of the target locale (validated against the blueprints like any save; 409 version_conflict when the Story changed since the job started), an alt text is written to the asset’s locale. Only a job awaiting review: otherwise 409 ai_job_not_reviewable (of two decisions racing, exactly one wins).',
      },
    })
    .post('/:aiJob/reject', async ({ access, params }) => ({ data: await rejectAiJob(kernel, access, params.aiJob) }), {
      params: AiJobParams,
      spaceRole: 'editor',
      response: Data(AiJobModel),
      detail: { summary: 'Reject an AI job: discard its result (409 ai_job_not_reviewable unless awaiting review)' },
    })
  return new Elysia().use(actions).use(jobs)
}

