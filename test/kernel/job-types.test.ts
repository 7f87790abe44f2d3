import { expect, setDefaultTimeout, test } from 'bun:test'
import type { JobQueue } from '../../src/kernel/jobs'
import '../../src/modules'

setDefaultTimeout(30_000)

/**
 * Jobs are typed like events: a declared queue's payload is checked wherever it is enqueued, defined or scheduled.
 * `bun run typecheck` is the test: each `@ts-expect-error` below fails the typecheck if the line compiles.
 */
function typeChecks(jobs: JobQueue) {
  void jobs.enqueue('forms.action', { submissionId: 1, base: 'http://localhost' })
  // @ts-expect-error a wrong payload for a declared queue
  void jobs.enqueue('forms.action', { wrong: 1 })
  // @ts-expect-error a missing payload field
  void jobs.enqueue('datasources.sync', {})
  jobs.define('webhooks.deliver', { handler: async ({ job }) => void job.payload.deliveryId.toUpperCase() })
  // @ts-expect-error the handler's payload is the declared one
  jobs.define('webhooks.deliver', { handler: async ({ job }) => void job.payload.deliveryIdd })
  // @ts-expect-error a misspelt queue name has an unknown payload: a handler cannot read it unchecked
  jobs.define('webhooks.delivr', { handler: async ({ job }) => void job.payload.deliveryId })
  jobs.schedule({ name: 'x', cron: '* * * * *', queue: 'webhooks.prune', payload: { olderThanDays: 3 } })
  // @ts-expect-error a schedule's payload is checked against its queue
  jobs.schedule({ name: 'x', cron: '* * * * *', queue: 'webhooks.prune', payload: { olderThanDays: '3' } })
  void jobs.enqueueMany(null as never, [{ queue: 'datasources.sync', payload: { datasourceId: 1 } }])
  // @ts-expect-error a batch's payloads are checked against their queue
  void jobs.enqueueMany(null as never, [{ queue: 'datasources.sync', payload: { datasource: 1 } }])
  // A queue made at run time (tests) takes any payload.
  const dynamic: string = 'test.queue'
  void jobs.enqueue(dynamic, { anything: true })
}

test('the job typing is checked by the typecheck (this file compiles only with it)', () => {
  expect(typeof typeChecks).toBe('function')
})
