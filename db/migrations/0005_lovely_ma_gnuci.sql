CREATE TABLE "analytics_daily" (
	"space_id" integer NOT NULL,
	"day" date NOT NULL,
	"story_uuid" uuid NOT NULL,
	"lang" text NOT NULL,
	"segment_key" text NOT NULL,
	"device" text NOT NULL,
	"referrer" text NOT NULL,
	"mounts" integer NOT NULL,
	CONSTRAINT "analytics_daily_space_id_day_story_uuid_lang_segment_key_device_referrer_pk" PRIMARY KEY("space_id","day","story_uuid","lang","segment_key","device","referrer")
);
--> statement-breakpoint
CREATE TABLE "analytics_events" (
	"space_id" integer NOT NULL,
	"story_uuid" uuid NOT NULL,
	"segment_key" text,
	"lang" text,
	"device" text NOT NULL,
	"referrer" text,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "analytics_rollup_state" (
	"id" smallint PRIMARY KEY NOT NULL,
	"rolled_until" date NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "analytics_daily_story_idx" ON "analytics_daily" USING btree ("space_id","story_uuid","day");--> statement-breakpoint
CREATE INDEX "analytics_events_space_at_idx" ON "analytics_events" USING btree ("space_id","at");--> statement-breakpoint
CREATE INDEX "analytics_events_at_idx" ON "analytics_events" USING btree ("at");