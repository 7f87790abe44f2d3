import { defineModule } from '../../kernel/module'
import { collaborationEvents } from './events'
import { createLiveHub } from './live'
import { CollaborationErrors } from './model'
import { PresenceRoster } from './roster'
import { collaborationRoutes } from './routes'
import { prunePresence } from './service'
import './jobs'

/**
 * Collaboration (spec 4.10): presence heartbeats and threaded comments anchored to blocks, and a live stream per
 * Story fed by the event bus on every instance.
 */
export const collaborationModule = defineModule({
  name: 'collaboration',
  setup: (kernel) => ({ hub: createLiveHub(kernel), roster: new PresenceRoster(kernel) }),
  onResync: (self) => self.roster.clear(),
  drain: (self) => self.hub.closeAll(),
  close: (self) => self.hub.closeAll(),
  routes: ({ kernel, guards, self }) => collaborationRoutes(kernel, guards, self.hub, self.roster),
  errors: Object.values(CollaborationErrors),
  events: collaborationEvents,
  on: {
    'presence.changed': (e, self) => {
      self.roster.onChanged(e.payload)
      self.hub.publish(e.payload.story_uuid, 'presence', e.payload)
    },
    'comment.changed': (e, self) => self.hub.publish(e.payload.story_uuid, 'comment', e.payload),
    'version.created': (e, self) =>
      self.hub.publish(e.payload.story.uuid, 'story', { story_uuid: e.payload.story.uuid, version_no: e.payload.story.version_no }),
    // Streams end with the access they were opened with, on every instance. Every role reads the stream, so a role
    // change never ends a person's own; a demotion revokes their Space tokens above the new role (space_token.revoked).
    'member.removed': (e, self) => {
      if (e.spaceId !== null) self.hub.endMember(e.spaceId, e.payload.member.user_id)
    },
    'space_token.revoked': (e, self) => self.hub.endTokens(e.payload.token_ids),
    'session.revoked': (e, self) => self.hub.endTokens(e.payload.token_ids),
  },
  jobs: (jobs, _self, kernel) => {
    jobs.define('collaboration.prune-presence', {
      handler: async () => {
        const n = await prunePresence(kernel)
        if (n) kernel.logger.debug('pruned presence sessions', { sessions: n })
      },
    })
    jobs.schedule({ name: 'collaboration.prune-presence', cron: '* * * * *', queue: 'collaboration.prune-presence', payload: {} })
  },
})
