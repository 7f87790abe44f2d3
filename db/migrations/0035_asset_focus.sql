ALTER TABLE "assets" ADD COLUMN "focus" jsonb;--> statement-breakpoint
ALTER TABLE "assets" ADD COLUMN "crop" jsonb;