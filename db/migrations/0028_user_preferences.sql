ALTER TABLE "users" ADD COLUMN "ui_language" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "ui_theme" text;