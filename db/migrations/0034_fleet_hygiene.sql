-- Added without a default, then given it: a volatile default on ADD COLUMN would rewrite the table under an exclusive lock; this way old rows keep NULL and only new rows get their transaction id.
ALTER TABLE "events" ADD COLUMN IF NOT EXISTS "tx" "xid8";--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "tx" SET DEFAULT pg_current_xact_id();--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "events_tx_idx" ON "events" USING btree ("tx","id");
--> statement-breakpoint
-- Raw analytics partitioned by UTC day (the rollup job creates days ahead and drops old ones whole); existing rows move to the default partition, whose old rows the job deletes.
ALTER TABLE "analytics_events" RENAME TO "analytics_events_unpartitioned";--> statement-breakpoint
DROP INDEX IF EXISTS "analytics_events_space_at_idx";--> statement-breakpoint
DROP INDEX IF EXISTS "analytics_events_at_idx";--> statement-breakpoint
CREATE TABLE "analytics_events" (LIKE "analytics_events_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE ("at");--> statement-breakpoint
CREATE TABLE "analytics_events_default" PARTITION OF "analytics_events" DEFAULT;--> statement-breakpoint
CREATE INDEX "analytics_events_space_at_idx" ON "analytics_events" USING btree ("space_id","at");--> statement-breakpoint
CREATE INDEX "analytics_events_at_idx" ON "analytics_events" USING btree ("at");--> statement-breakpoint
INSERT INTO "analytics_events" SELECT * FROM "analytics_events_unpartitioned";--> statement-breakpoint
DROP TABLE "analytics_events_unpartitioned";
