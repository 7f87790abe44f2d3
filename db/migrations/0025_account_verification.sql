CREATE TABLE "pending_sign_ups" (
	"id" serial PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"name" text NOT NULL,
	"tenant_name" text,
	"password_hash" text NOT NULL,
	"token_hash" text NOT NULL,
	"follow_up" jsonb,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "pitch_invitees" ADD COLUMN "claim_token_hash" text;--> statement-breakpoint
ALTER TABLE "pitch_invitees" ADD COLUMN "claim_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "pitch_invitees" ADD COLUMN "released_at" timestamp with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "pending_sign_ups_hash_key" ON "pending_sign_ups" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "pending_sign_ups_expires_idx" ON "pending_sign_ups" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "pitch_invitees_claim_key" ON "pitch_invitees" USING btree ("claim_token_hash");