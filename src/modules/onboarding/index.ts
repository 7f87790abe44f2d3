import { defineModule } from '../../kernel/module'
import { HOUR } from '../../kernel/rate-limit'
import { authModule } from '../auth'
import { PITCH_EXPIRY_QUEUE } from './jobs'
import { ONBOARDING_ERRORS } from './model'
import { onboardingRoutes } from './routes'
import { pitchPageRoutes } from './pitch-page'
import { demoSignInRefusal, endExpiredDemos, ONBOARD_FOLLOW_UP, onboardFollowUp, releaseEndedDemoTx } from './service'

/**
 * Onboarding (§4.7): one-step sign-up with a first Space and optional sample content, and pitch demo accounts
 * (PITCH_DEMOS) — invitees a Tenant manages; an anonymous call mails the invitee a link, following it makes the demo
 * once; a daily job closes it after PITCH_TTL_DAYS.
 * It owns `pitch_invitees`; accounts and Spaces are made through the auth and spaces services (in one transaction),
 * sample content through the stories, forms and datasources services.
 */
export const onboardingModule = defineModule({
  name: 'onboarding',
  setup: (kernel, use) => {
    const auth = use(authModule)
    // The users of an ended demo cannot sign in again (their tokens were revoked when it ended) until they reset their
    // password by mail, which makes the account an ordinary one.
    auth.signInChecks.push((user) => demoSignInRefusal(kernel, user))
    auth.passwordResetHooks.push((tx, user) => releaseEndedDemoTx(kernel, tx, user))
    // Onboarding's first Space (and sample content) follows the account, also when a mailed link makes it later.
    auth.signUpFollowUps.set(ONBOARD_FOLLOW_UP, onboardFollowUp(kernel))
    return { auth }
  },
  routes: ({ kernel, guards, self }) => onboardingRoutes(kernel, guards, self.auth),
  // The page the demo link opens (static: it reads nothing; its form posts to a limited route).
  root: () => pitchPageRoutes(),
  errors: ONBOARDING_ERRORS,
  jobs: (jobs, _self, kernel) => {
    jobs.define(PITCH_EXPIRY_QUEUE, { handler: async () => void (await endExpiredDemos(kernel)) })
    jobs.schedule({ name: PITCH_EXPIRY_QUEUE, cron: '7 3 * * *', queue: PITCH_EXPIRY_QUEUE, payload: {} })
  },
  rateLimits: [
    // §4.7 and §8.
    { id: 'onboarding.onboard', method: 'POST', path: '/v1/onboard', limit: 5, windowSeconds: HOUR },
    { id: 'onboarding.pitch.test-account', method: 'POST', path: '/v1/pitch/:slug/test-account', limit: 10, windowSeconds: HOUR },
    { id: 'onboarding.pitch.claim', method: 'POST', path: '/v1/pitch/claim', limit: 10, windowSeconds: HOUR },
  ],
  // A sign-up leaves no address in the request log (the hash, or nothing); the pitch slug is the invitation.
  privatePaths: ['/v1/onboard', '/v1/pitch/:slug/test-account', '/v1/pitch/claim'],
})
