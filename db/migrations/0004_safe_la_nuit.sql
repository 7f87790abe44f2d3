CREATE TABLE "datasource_entry_sets" (
	"datasource_id" integer PRIMARY KEY NOT NULL,
	"entries" json NOT NULL
);
--> statement-breakpoint
CREATE TABLE "datasources" (
	"id" serial PRIMARY KEY NOT NULL,
	"space_id" integer NOT NULL,
	"key" text NOT NULL,
	"label" text NOT NULL,
	"type" text NOT NULL,
	"config" jsonb NOT NULL,
	"headers_sealed" text,
	"secret_sealed" text,
	"secret_fingerprint" text,
	"status" text NOT NULL,
	"revision" integer NOT NULL,
	"entry_count" integer NOT NULL,
	"data_hash" text,
	"last_synced_at" timestamp with time zone,
	"last_error" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "datasource_entry_sets" ADD CONSTRAINT "datasource_entry_sets_datasource_id_datasources_id_fk" FOREIGN KEY ("datasource_id") REFERENCES "public"."datasources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "datasources" ADD CONSTRAINT "datasources_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "datasources_space_key_key" ON "datasources" USING btree ("space_id","key");--> statement-breakpoint
CREATE INDEX "datasources_type_idx" ON "datasources" USING btree ("type");