CREATE TABLE "calendar_events" (
	"id" serial PRIMARY KEY NOT NULL,
	"uuid" uuid NOT NULL,
	"space_id" integer NOT NULL,
	"slug" text NOT NULL,
	"title" jsonb NOT NULL,
	"description" jsonb NOT NULL,
	"starts_at" timestamp with time zone NOT NULL,
	"ends_at" timestamp with time zone NOT NULL,
	"timezone" text NOT NULL,
	"location" jsonb NOT NULL,
	"capacity" integer,
	"waitlist" boolean DEFAULT false NOT NULL,
	"registration_open" boolean NOT NULL,
	"registration_closes_at" timestamp with time zone,
	"published" boolean NOT NULL,
	"fields" jsonb,
	"confirmed_count" integer DEFAULT 0 NOT NULL,
	"sequence" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_registration_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"registration_id" integer NOT NULL,
	"kind" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_registrations" (
	"id" serial PRIMARY KEY NOT NULL,
	"uuid" uuid NOT NULL,
	"event_id" integer NOT NULL,
	"space_id" integer NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"fields" jsonb NOT NULL,
	"lang" text,
	"status" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"promoted_at" timestamp with time zone,
	"cancelled_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "calendar_events" ADD CONSTRAINT "calendar_events_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_registration_tokens" ADD CONSTRAINT "event_registration_tokens_registration_id_event_registrations_id_fk" FOREIGN KEY ("registration_id") REFERENCES "public"."event_registrations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_registrations" ADD CONSTRAINT "event_registrations_event_id_calendar_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."calendar_events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "calendar_events_uuid_key" ON "calendar_events" USING btree ("uuid");--> statement-breakpoint
CREATE UNIQUE INDEX "calendar_events_space_slug_key" ON "calendar_events" USING btree ("space_id","slug");--> statement-breakpoint
CREATE INDEX "calendar_events_space_starts_idx" ON "calendar_events" USING btree ("space_id","starts_at");--> statement-breakpoint
CREATE INDEX "event_registration_tokens_registration_idx" ON "event_registration_tokens" USING btree ("registration_id");--> statement-breakpoint
CREATE UNIQUE INDEX "event_registrations_uuid_key" ON "event_registrations" USING btree ("uuid");--> statement-breakpoint
CREATE UNIQUE INDEX "event_registrations_live_email_key" ON "event_registrations" USING btree ("event_id","email") WHERE status <> 'cancelled';--> statement-breakpoint
CREATE INDEX "event_registrations_event_idx" ON "event_registrations" USING btree ("event_id","id");