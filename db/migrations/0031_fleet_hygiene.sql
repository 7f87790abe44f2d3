-- Added without a default, then given it: a volatile default on ADD COLUMN would rewrite the table under an exclusive lock; this way old rows keep NULL and only new rows get their transaction id.
ALTER TABLE "events" ADD COLUMN IF NOT EXISTS "tx" "xid8";--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "tx" SET DEFAULT pg_current_xact_id();--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "events_tx_idx" ON "events" USING btree ("tx","id");
