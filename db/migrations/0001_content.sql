CREATE TABLE "components" (
	"id" serial PRIMARY KEY NOT NULL,
	"space_id" integer NOT NULL,
	"name" text NOT NULL,
	"display_name" text NOT NULL,
	"is_root" boolean NOT NULL,
	"is_nestable" boolean NOT NULL,
	"schema" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stories" (
	"id" serial PRIMARY KEY NOT NULL,
	"uuid" uuid NOT NULL,
	"space_id" integer NOT NULL,
	"parent_id" integer,
	"lang" text NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"full_path" text NOT NULL,
	"depth" smallint NOT NULL,
	"is_folder" boolean DEFAULT false NOT NULL,
	"status" text NOT NULL,
	"version_no" integer NOT NULL,
	"has_unpublished_changes" boolean NOT NULL,
	"published_at" timestamp with time zone,
	"archived_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "story_contents" (
	"story_id" integer NOT NULL,
	"lang" text NOT NULL,
	"name" text,
	"content" jsonb NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "story_contents_story_id_lang_pk" PRIMARY KEY("story_id","lang")
);
--> statement-breakpoint
CREATE TABLE "story_counts" (
	"space_id" integer NOT NULL,
	"status" text NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "story_counts_space_id_status_pk" PRIMARY KEY("space_id","status")
);
--> statement-breakpoint
CREATE TABLE "story_published" (
	"story_id" integer NOT NULL,
	"lang" text NOT NULL,
	"name" text NOT NULL,
	"content" jsonb NOT NULL,
	"version_no" integer NOT NULL,
	"published_at" timestamp with time zone NOT NULL,
	CONSTRAINT "story_published_story_id_lang_pk" PRIMARY KEY("story_id","lang")
);
--> statement-breakpoint
CREATE TABLE "story_versions" (
	"story_id" integer NOT NULL,
	"version_no" integer NOT NULL,
	"lang" text NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"full_path" text NOT NULL,
	"content" jsonb NOT NULL,
	"author_user_id" integer,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "story_versions_story_id_version_no_pk" PRIMARY KEY("story_id","version_no")
);
--> statement-breakpoint
CREATE TABLE "job_schedules" (
	"name" text PRIMARY KEY NOT NULL,
	"cron" text NOT NULL,
	"queue" text NOT NULL,
	"payload" jsonb NOT NULL,
	"next_run_at" timestamp with time zone NOT NULL,
	"last_run_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"queue" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text NOT NULL,
	"run_at" timestamp with time zone NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"dedupe_key" text,
	"claim_token" text,
	"locked_by" text,
	"locked_until" timestamp with time zone,
	"last_error" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"delivery_id" uuid NOT NULL,
	"subscription_id" integer NOT NULL,
	"retry" integer NOT NULL,
	"outcome" text NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"attempted_at" timestamp with time zone,
	"response_status" integer,
	"response_body" text,
	"latency_ms" integer,
	"error" text,
	"logged_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" uuid PRIMARY KEY NOT NULL,
	"subscription_id" integer NOT NULL,
	"space_id" integer NOT NULL,
	"kind" text NOT NULL,
	"event" text NOT NULL,
	"event_id" bigint,
	"payload" jsonb NOT NULL,
	"status" text NOT NULL,
	"redelivery_of" uuid,
	"created_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webhook_subscriptions" (
	"id" serial PRIMARY KEY NOT NULL,
	"space_id" integer NOT NULL,
	"label" text NOT NULL,
	"url" text NOT NULL,
	"events" text[] NOT NULL,
	"active" boolean NOT NULL,
	"secret_sealed" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "components" ADD CONSTRAINT "components_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stories" ADD CONSTRAINT "stories_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stories" ADD CONSTRAINT "stories_parent_id_stories_id_fk" FOREIGN KEY ("parent_id") REFERENCES "public"."stories"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "story_contents" ADD CONSTRAINT "story_contents_story_id_stories_id_fk" FOREIGN KEY ("story_id") REFERENCES "public"."stories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "story_counts" ADD CONSTRAINT "story_counts_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "story_published" ADD CONSTRAINT "story_published_story_id_stories_id_fk" FOREIGN KEY ("story_id") REFERENCES "public"."stories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "story_versions" ADD CONSTRAINT "story_versions_story_id_stories_id_fk" FOREIGN KEY ("story_id") REFERENCES "public"."stories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_subscription_id_webhook_subscriptions_id_fk" FOREIGN KEY ("subscription_id") REFERENCES "public"."webhook_subscriptions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD CONSTRAINT "webhook_subscriptions_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "components_space_name_key" ON "components" USING btree ("space_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "stories_uuid_key" ON "stories" USING btree ("uuid");--> statement-breakpoint
CREATE UNIQUE INDEX "stories_space_path_key" ON "stories" USING btree ("space_id","full_path");--> statement-breakpoint
CREATE INDEX "stories_space_path_prefix_idx" ON "stories" USING btree ("space_id","full_path" text_pattern_ops);--> statement-breakpoint
CREATE INDEX "stories_space_status_path_idx" ON "stories" USING btree ("space_id","status","full_path");--> statement-breakpoint
CREATE INDEX "stories_space_parent_path_idx" ON "stories" USING btree ("space_id","parent_id","full_path");--> statement-breakpoint
CREATE INDEX "stories_parent_idx" ON "stories" USING btree ("parent_id");--> statement-breakpoint
CREATE INDEX "jobs_claim_idx" ON "jobs" USING btree ("queue","run_at","id") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "jobs_lease_expiry_idx" ON "jobs" USING btree ("locked_until") WHERE status = 'running';--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_dedupe_key" ON "jobs" USING btree ("queue","dedupe_key") WHERE status in ('pending', 'running');--> statement-breakpoint
CREATE INDEX "jobs_finished_idx" ON "jobs" USING btree ("finished_at") WHERE finished_at is not null;--> statement-breakpoint
CREATE INDEX "webhook_attempts_log_idx" ON "webhook_attempts" USING btree ("subscription_id","logged_at","id");--> statement-breakpoint
CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" USING btree ("delivery_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_subscription_idx" ON "webhook_deliveries" USING btree ("subscription_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_subscriptions_space_idx" ON "webhook_subscriptions" USING btree ("space_id");