CREATE TABLE "audience_segments" (
	"id" serial PRIMARY KEY NOT NULL,
	"space_id" integer NOT NULL,
	"key" text NOT NULL,
	"label" text NOT NULL,
	"priority" integer NOT NULL,
	"active" boolean NOT NULL,
	"rules" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "story_variants" (
	"id" serial PRIMARY KEY NOT NULL,
	"space_id" integer NOT NULL,
	"story_id" integer NOT NULL,
	"audience_segment_id" integer NOT NULL,
	"lang" text NOT NULL,
	"content" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "story_variants_published" (
	"story_id" integer NOT NULL,
	"audience_segment_id" integer NOT NULL,
	"lang" text NOT NULL,
	"content" jsonb NOT NULL,
	CONSTRAINT "story_variants_published_story_id_audience_segment_id_lang_pk" PRIMARY KEY("story_id","audience_segment_id","lang")
);
--> statement-breakpoint
ALTER TABLE "audience_segments" ADD CONSTRAINT "audience_segments_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "story_variants" ADD CONSTRAINT "story_variants_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "story_variants" ADD CONSTRAINT "story_variants_story_id_stories_id_fk" FOREIGN KEY ("story_id") REFERENCES "public"."stories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "story_variants" ADD CONSTRAINT "story_variants_audience_segment_id_audience_segments_id_fk" FOREIGN KEY ("audience_segment_id") REFERENCES "public"."audience_segments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "story_variants_published" ADD CONSTRAINT "story_variants_published_story_id_stories_id_fk" FOREIGN KEY ("story_id") REFERENCES "public"."stories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "story_variants_published" ADD CONSTRAINT "story_variants_published_audience_segment_id_audience_segments_id_fk" FOREIGN KEY ("audience_segment_id") REFERENCES "public"."audience_segments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "audience_segments_space_key" ON "audience_segments" USING btree ("space_id","key");--> statement-breakpoint
CREATE INDEX "audience_segments_space_order_idx" ON "audience_segments" USING btree ("space_id","priority","id");--> statement-breakpoint
CREATE UNIQUE INDEX "story_variants_story_segment_lang_key" ON "story_variants" USING btree ("story_id","audience_segment_id","lang");--> statement-breakpoint
CREATE INDEX "story_variants_segment_idx" ON "story_variants" USING btree ("audience_segment_id");--> statement-breakpoint
CREATE INDEX "story_variants_published_segment_idx" ON "story_variants_published" USING btree ("audience_segment_id");