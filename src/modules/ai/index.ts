import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { assetsModule } from '../assets'
import { searchModule } from '../search'
import { aiEvents } from './events'
import { AiErrors } from './model'
import { AiProvider } from './provider'
import { aiRoutes } from './routes'
import type { AiState } from './service'
import { registerAiJobs } from './translate'

/**
 * AI actions (spec 4.8) over any OpenAI-compatible chat-completions API (AI_BASE_URL, AI_MODEL, AI_VISION_MODEL):
 * text and streamed text, alt text, SEO meta, internal links, Story insights, translation; and AI jobs, the review
 * step that stands between a model's suggestion and any change to content. Stories, assets, search and analytics are
 * reached through their services only.
 */
export const aiModule = defineModule<AiState>({
  name: 'ai',
  setup: (kernel, use) => ({ provider: new AiProvider(kernel.config), images: use(assetsModule).images, search: use(searchModule).registry }),
  routes: ({ kernel, guards, self }) => aiRoutes(kernel, guards, self),
  errors: Object.values(AiErrors),
  events: aiEvents,
  jobs: (jobs, self, kernel) => registerAiJobs(jobs, self, kernel),
  rateLimits: [
    { id: 'ai.status', method: 'GET', path: '/v1/spaces/:space/ai/status', limit: 120, windowSeconds: MIN },
    { id: 'ai.text', method: 'POST', path: '/v1/spaces/:space/ai/text', limit: 30, windowSeconds: MIN },
    { id: 'ai.stream-text', method: 'POST', path: '/v1/spaces/:space/ai/stream-text', limit: 10, windowSeconds: MIN },
    { id: 'ai.alt-text', method: 'POST', path: '/v1/spaces/:space/ai/alt-text', limit: 30, windowSeconds: MIN },
    { id: 'ai.seo-meta', method: 'POST', path: '/v1/spaces/:space/ai/seo-meta', limit: 30, windowSeconds: MIN },
    { id: 'ai.internal-links', method: 'POST', path: '/v1/spaces/:space/ai/internal-links', limit: 30, windowSeconds: MIN },
    { id: 'ai.story-insights', method: 'POST', path: '/v1/spaces/:space/ai/story-insights', limit: 10, windowSeconds: MIN },
    { id: 'ai.translate', method: 'POST', path: '/v1/spaces/:space/ai/translate', limit: 30, windowSeconds: MIN },
    { id: 'ai-jobs.approve', method: 'POST', path: '/v1/spaces/:space/ai-jobs/:aiJob/approve', limit: 60, windowSeconds: MIN },
    { id: 'ai-jobs.reject', method: 'POST', path: '/v1/spaces/:space/ai-jobs/:aiJob/reject', limit: 60, windowSeconds: MIN },
  ],
})
