CREATE TABLE "form_ip_salts" (
	"day" text PRIMARY KEY NOT NULL,
	"salt" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "form_submissions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"uuid" uuid NOT NULL,
	"form_id" integer NOT NULL,
	"space_id" integer NOT NULL,
	"data" jsonb NOT NULL,
	"lang" text,
	"submitted_at" timestamp with time zone NOT NULL,
	"spam_score" real NOT NULL,
	"spam" boolean NOT NULL,
	"ip_hash" text NOT NULL,
	"ua_hash" text,
	"referrer" text,
	"action_status" text NOT NULL,
	"action_error" text
);
--> statement-breakpoint
CREATE TABLE "forms" (
	"id" serial PRIMARY KEY NOT NULL,
	"uuid" uuid NOT NULL,
	"space_id" integer NOT NULL,
	"slug" text NOT NULL,
	"label" text NOT NULL,
	"fields" jsonb NOT NULL,
	"submit_action" text NOT NULL,
	"notification_email" text,
	"webhook_url" text,
	"webhook_secret_sealed" text,
	"redirect_url" text,
	"success_message" jsonb NOT NULL,
	"rate_limit_per_ip" integer NOT NULL,
	"spam_provider" text,
	"spam_secret_sealed" text,
	"compiled_schema" jsonb NOT NULL,
	"archived_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "newsletter_settings" (
	"space_id" integer PRIMARY KEY NOT NULL,
	"redirect_url" text,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "subscriber_tokens" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"subscriber_id" integer NOT NULL,
	"kind" text NOT NULL,
	"expires_at" timestamp with time zone,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "subscribers" (
	"id" serial PRIMARY KEY NOT NULL,
	"space_id" integer NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"lang" text,
	"status" text NOT NULL,
	"source" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"confirmed_at" timestamp with time zone,
	"unsubscribed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "form_submissions" ADD CONSTRAINT "form_submissions_form_id_forms_id_fk" FOREIGN KEY ("form_id") REFERENCES "public"."forms"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "forms" ADD CONSTRAINT "forms_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "newsletter_settings" ADD CONSTRAINT "newsletter_settings_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscriber_tokens" ADD CONSTRAINT "subscriber_tokens_subscriber_id_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscribers" ADD CONSTRAINT "subscribers_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "form_submissions_uuid_key" ON "form_submissions" USING btree ("uuid");--> statement-breakpoint
CREATE INDEX "form_submissions_form_idx" ON "form_submissions" USING btree ("form_id","id");--> statement-breakpoint
CREATE INDEX "form_submissions_ip_day_idx" ON "form_submissions" USING btree ("form_id","ip_hash","submitted_at");--> statement-breakpoint
CREATE UNIQUE INDEX "forms_uuid_key" ON "forms" USING btree ("uuid");--> statement-breakpoint
CREATE UNIQUE INDEX "forms_space_slug_live_key" ON "forms" USING btree ("space_id","slug") WHERE archived_at is null;--> statement-breakpoint
CREATE UNIQUE INDEX "subscriber_tokens_hash_key" ON "subscriber_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "subscriber_tokens_subscriber_idx" ON "subscriber_tokens" USING btree ("subscriber_id");--> statement-breakpoint
CREATE UNIQUE INDEX "subscribers_space_email_key" ON "subscribers" USING btree ("space_id","email");--> statement-breakpoint
CREATE INDEX "subscribers_space_idx" ON "subscribers" USING btree ("space_id","id");