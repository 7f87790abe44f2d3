CREATE TABLE "analytics_story_daily" (
	"space_id" integer NOT NULL,
	"day" date NOT NULL,
	"story_uuid" uuid NOT NULL,
	"mounts" integer NOT NULL,
	CONSTRAINT "analytics_story_daily_space_id_day_story_uuid_pk" PRIMARY KEY("space_id","day","story_uuid")
);
--> statement-breakpoint
ALTER TABLE "analytics_rollup_state" ADD COLUMN "rolled_minutes" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "analytics_rollup_state" ADD COLUMN "revision" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "analytics_story_daily_story_idx" ON "analytics_story_daily" USING btree ("space_id","story_uuid","day");