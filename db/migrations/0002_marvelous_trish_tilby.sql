CREATE TABLE "comments" (
	"id" serial PRIMARY KEY NOT NULL,
	"space_id" integer NOT NULL,
	"story_id" integer NOT NULL,
	"parent_id" integer,
	"block_uid" text NOT NULL,
	"block_suffix" text NOT NULL,
	"block_path" text NOT NULL,
	"body" text,
	"deleted" boolean DEFAULT false NOT NULL,
	"resolved" boolean DEFAULT false NOT NULL,
	"author_user_id" integer NOT NULL,
	"edited" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "presence_sessions" (
	"story_id" integer NOT NULL,
	"session_id" uuid NOT NULL,
	"space_id" integer NOT NULL,
	"user_id" integer NOT NULL,
	"block_path" text NOT NULL,
	"selection" jsonb NOT NULL,
	"last_seen" timestamp with time zone NOT NULL,
	CONSTRAINT "presence_sessions_story_id_session_id_pk" PRIMARY KEY("story_id","session_id")
);
--> statement-breakpoint
ALTER TABLE "comments" ADD CONSTRAINT "comments_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "comments" ADD CONSTRAINT "comments_story_id_stories_id_fk" FOREIGN KEY ("story_id") REFERENCES "public"."stories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "comments" ADD CONSTRAINT "comments_author_user_id_users_id_fk" FOREIGN KEY ("author_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "presence_sessions" ADD CONSTRAINT "presence_sessions_story_id_stories_id_fk" FOREIGN KEY ("story_id") REFERENCES "public"."stories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "presence_sessions" ADD CONSTRAINT "presence_sessions_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "presence_sessions" ADD CONSTRAINT "presence_sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "comments_story_idx" ON "comments" USING btree ("story_id","id");--> statement-breakpoint
CREATE INDEX "comments_parent_idx" ON "comments" USING btree ("parent_id");--> statement-breakpoint
CREATE INDEX "presence_sessions_last_seen_idx" ON "presence_sessions" USING btree ("last_seen");