CREATE TABLE "story_changes" (
	"space_id" integer NOT NULL,
	"seq" bigint NOT NULL,
	"story_uuid" uuid NOT NULL,
	"kind" text NOT NULL,
	"full_path" text NOT NULL,
	"from_path" text,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "story_changes_space_id_seq_pk" PRIMARY KEY("space_id","seq")
);
--> statement-breakpoint
CREATE TABLE "story_content_versions" (
	"space_id" integer PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "stories" ADD COLUMN "first_published_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "story_changes" ADD CONSTRAINT "story_changes_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "story_content_versions" ADD CONSTRAINT "story_content_versions_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "story_changes_story_key" ON "story_changes" USING btree ("space_id","story_uuid");--> statement-breakpoint
-- Backfill: a Story published before this column existed was first published no later than its last publish.
UPDATE "stories" SET "first_published_at" = "published_at" WHERE "published_at" IS NOT NULL;
