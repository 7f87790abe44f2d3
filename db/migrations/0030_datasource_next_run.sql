-- The datasource schedule by next_run_at. IF NOT EXISTS throughout: this runs inside the migration transaction (where
-- CREATE INDEX CONCURRENTLY cannot), so on a large database an operator may add the column and build both indexes
-- beforehand without blocking writes (docs/operations.md "Many tenants"); these statements then do nothing. Existing
-- http_json rows get their next_run_at from the datasources module's minute tick (SQL cannot read a cron expression).
ALTER TABLE "datasources" ADD COLUMN IF NOT EXISTS "next_run_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "datasources_next_run_at_idx" ON "datasources" USING btree ("next_run_at") WHERE next_run_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "datasources_unscheduled_idx" ON "datasources" USING btree ("id") WHERE type = 'http_json' AND next_run_at IS NULL;
