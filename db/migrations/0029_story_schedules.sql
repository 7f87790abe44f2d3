CREATE TABLE "story_schedules" (
	"id" serial PRIMARY KEY NOT NULL,
	"space_id" integer NOT NULL,
	"story_id" integer NOT NULL,
	"action" text NOT NULL,
	"run_at" timestamp with time zone NOT NULL,
	"user_id" integer,
	"token_id" text,
	"error" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "story_schedules" ADD CONSTRAINT "story_schedules_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "story_schedules" ADD CONSTRAINT "story_schedules_story_id_stories_id_fk" FOREIGN KEY ("story_id") REFERENCES "public"."stories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "story_schedules_story_action_key" ON "story_schedules" USING btree ("story_id","action");--> statement-breakpoint
CREATE INDEX "story_schedules_space_run_idx" ON "story_schedules" USING btree ("space_id","run_at");