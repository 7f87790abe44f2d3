CREATE TABLE "preview_snapshots" (
	"token_id" text NOT NULL,
	"story_uuid" text NOT NULL,
	"lang" text NOT NULL,
	"name" text,
	"content" jsonb NOT NULL,
	"bytes" integer NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "preview_snapshots_token_id_story_uuid_lang_pk" PRIMARY KEY("token_id","story_uuid","lang")
);
--> statement-breakpoint
ALTER TABLE "preview_snapshots" ADD CONSTRAINT "preview_snapshots_token_id_preview_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."preview_tokens"("id") ON DELETE cascade ON UPDATE no action;