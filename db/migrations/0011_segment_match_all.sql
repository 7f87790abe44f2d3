ALTER TABLE "audience_segments" ADD COLUMN "match_all" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Segments saved before match_all existed with no rules matched every visitor: keep that, now said explicitly.
UPDATE "audience_segments" SET "match_all" = true WHERE "rules" = '[]'::jsonb;
