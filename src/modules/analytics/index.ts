import { defineModule } from '../../kernel/module'
import { segmentsModule } from '../segments'
import { spacesModule } from '../spaces'
import { storiesModule } from '../stories'
import { BeaconLimiter, BeaconPipeline, newMetrics, type SegmentCheck } from './beacon'
import { BeaconBuffer } from './buffer'
import { beaconCdnRoutes, beaconFastRoute, type BeaconDeps } from './cdn'
import { beaconStep } from './read-step'
import { RollupCache, rollup } from './repo'
import { analyticsRoutes } from './routes'
import './jobs'

/**
 * Privacy-first analytics (spec 4.3, 4.8, 4.14): the beacon (a pipeline of named steps into a batched writer), the
 * rollup (every five minutes) with 90-day raw retention, and the aggregated queries. No cookie, no IP, no fingerprint is kept.
 */
export const analyticsModule = defineModule({
  name: 'analytics',
  setup(kernel, use) {
    const metrics = newMetrics()
    const buffer = new BeaconBuffer(kernel, metrics)
    const limiter = new BeaconLimiter(() => kernel.clock.ms())
    // A beacon's segment_key must name a segment of the Space: the segments module answers from its in-memory cache.
    const segments = use(segmentsModule)
    const isSegmentKey: SegmentCheck = (spaceId, key) => segments.isSegmentKey(spaceId, key)
    const pipeline = new BeaconPipeline({
      kernel,
      spaces: use(spacesModule).publicSpaces,
      published: use(storiesModule).published,
      isSegmentKey,
      buffer,
      metrics,
    })
    const beacon: BeaconDeps = { limiter, pipeline, metrics, inflight: new Set() }
    // Aggregates of rolled-up days (keyed by the watermark): dashboards re-read them without a scan.
    const rollups = new RollupCache()
    return { metrics, buffer, limiter, pipeline, beacon, rollups, metricsTimer: null as ReturnType<typeof setInterval> | null }
  },
  start(self, kernel) {
    self.buffer.start()
    self.limiter.start()
    // The pipeline's counters (accepted, written, drops per reason) as a log line each minute that saw beacons.
    let seen = 0
    self.metricsTimer = setInterval(() => {
      if (self.metrics.received === seen) return
      seen = self.metrics.received
      kernel.logger.info('beacon pipeline', { ...self.metrics, dropped: { ...self.metrics.dropped }, pending: self.buffer.pending })
    }, 60_000)
    self.metricsTimer.unref?.()
  },
  async close(self, kernel) {
    // Beacons already answered finish their steps, then everything buffered is written.
    await Promise.allSettled([...self.beacon.inflight])
    if (self.metricsTimer) clearInterval(self.metricsTimer)
    self.buffer.stop()
    self.limiter.stop()
    await self.buffer.flush()
    kernel.logger.info('beacon pipeline closed', { ...self.metrics, dropped: { ...self.metrics.dropped } })
  },
  routes: ({ kernel, guards, self }) => analyticsRoutes(kernel, guards, self.rollups),
  publicRoutes: ({ self, requestInfo }) => beaconCdnRoutes(self.beacon, (request) => requestInfo(request).ip),
  fast: ({ self }) => [beaconFastRoute(self.beacon)],
  readSteps: (_self, kernel) => [beaconStep(kernel.config)],
  jobs: (jobs, _self, kernel) => {
    jobs.define('analytics.rollup', {
      handler: async () => {
        const r = await rollup(kernel.db.db, kernel.clock.now())
        const fields = { slots: r.slots, mounts: r.mounts, raw_deleted: r.deleted, raw_partitions_dropped: r.partitionsDropped, rolled_until: r.rolledUntil }
        // 288 routine runs a day stay at debug; a catch-up after missed ticks, or the daily retention, is news.
        if (r.slots > 1 || r.deleted > 0 || r.partitionsDropped > 0) kernel.logger.info('analytics rolled up', fields)
        else kernel.logger.debug('analytics rolled up', fields)
      },
    })
    // Every five minutes, ROLLUP_GRACE_MS (3 min) after a slot ends, so queries read at most the last 8 minutes raw;
    // the cron fires once across all instances, and a run after missed ticks rolls every finished slot.
    jobs.schedule({ name: 'analytics.rollup', cron: '3-59/5 * * * *', queue: 'analytics.rollup', payload: {} })
  },
})

