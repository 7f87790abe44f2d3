CREATE TABLE "preview_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"space_id" integer NOT NULL,
	"secret_hash" text NOT NULL,
	"created_by" integer,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "spaces" ADD COLUMN "preview_url" text;--> statement-breakpoint
ALTER TABLE "preview_tokens" ADD CONSTRAINT "preview_tokens_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "preview_tokens_expires_idx" ON "preview_tokens" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "preview_tokens_space_idx" ON "preview_tokens" USING btree ("space_id");