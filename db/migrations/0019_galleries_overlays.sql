CREATE TABLE "galleries" (
	"id" serial PRIMARY KEY NOT NULL,
	"uuid" uuid NOT NULL,
	"space_id" integer NOT NULL,
	"slug" text NOT NULL,
	"title" jsonb NOT NULL,
	"items" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dom_overlays" (
	"id" serial PRIMARY KEY NOT NULL,
	"uuid" uuid NOT NULL,
	"space_id" integer NOT NULL,
	"name" text NOT NULL,
	"path_pattern" text NOT NULL,
	"selector" text NOT NULL,
	"action" text NOT NULL,
	"attribute" text,
	"content" jsonb NOT NULL,
	"segment_key" text,
	"active" boolean NOT NULL,
	"priority" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "galleries" ADD CONSTRAINT "galleries_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dom_overlays" ADD CONSTRAINT "dom_overlays_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "galleries_uuid_key" ON "galleries" USING btree ("uuid");--> statement-breakpoint
CREATE UNIQUE INDEX "galleries_space_slug_key" ON "galleries" USING btree ("space_id","slug");--> statement-breakpoint
CREATE INDEX "galleries_space_created_idx" ON "galleries" USING btree ("space_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "dom_overlays_uuid_key" ON "dom_overlays" USING btree ("uuid");--> statement-breakpoint
CREATE INDEX "dom_overlays_space_order_idx" ON "dom_overlays" USING btree ("space_id","priority","id");