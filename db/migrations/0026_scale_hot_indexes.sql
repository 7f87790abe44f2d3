-- IF NOT EXISTS: on a large database an operator may build these beforehand without blocking writes
-- (CREATE INDEX CONCURRENTLY, docs/operations.md "Many tenants"); this migration then finds them and does nothing.
CREATE INDEX IF NOT EXISTS "stories_space_published_id_idx" ON "stories" USING btree ("space_id","id") WHERE status = 'published';--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "stories_space_status_published_at_idx" ON "stories" USING btree ("space_id","status","published_at");
