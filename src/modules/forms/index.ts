import { defineModule } from '../../kernel/module'
import { MIN } from '../../kernel/rate-limit'
import { registerFormJobs } from './actions'
import { FormCache } from './cache'
import { formEvents } from './events'
import { formFilterHooks } from './hooks'
import { FormErrors } from './model'
import { formCdnRoutes, formRoutes } from './routes'
import { Validators } from './schema'
import { DailySalts } from './submit'
import { SubmissionWriter } from './writer'

/**
 * Forms (spec 2, 4.6, 4.12): definitions compiled to JSON Schema, the public submit with honeypot, validation,
 * privacy-preserving hashes, captcha and a spam heuristic, actions (e-mail, signed webhook, lead → subscriber) as
 * durable jobs, submissions and their CSV export.
 */
export const formsModule = defineModule({
  name: 'forms',
  setup: (kernel) => ({
    forms: new FormCache(kernel),
    salts: new DailySalts(kernel),
    validators: new Validators(),
    writer: new SubmissionWriter(kernel),
  }),
  routes: ({ kernel, guards }) => formRoutes(kernel, guards),
  publicRoutes: ({ kernel, guards, self, requestInfo }) => formCdnRoutes(kernel, guards, self, requestInfo),
  errors: Object.values(FormErrors),
  events: formEvents,
  filterHooks: formFilterHooks,
  caches: (self) => [self.forms.cache],
  jobs: (jobs, self, kernel) => registerFormJobs(jobs, kernel, self.salts),
  rateLimits: [
    // Spec 4.2 / 4.6: 20/min/IP at the route; the form's own rate_limit_per_ip (per UTC day) is checked in the submit.
    { id: 'cdn.forms.submit', method: 'POST', path: '/v1/cdn/:space/forms/:slug', limit: 20, windowSeconds: MIN },
  ],
  // Forms promise that no IP is stored (only `ip_hash`): the request log writes none for the submit either.
  privatePaths: ['/v1/cdn/:space/forms/:slug'],
})
