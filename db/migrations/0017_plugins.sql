CREATE TABLE "plugin_calls" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"plugin_id" integer NOT NULL,
	"hook" text NOT NULL,
	"called_at" timestamp with time zone NOT NULL,
	"latency_ms" integer,
	"response_status" integer,
	"outcome" text NOT NULL,
	"message" text
);
--> statement-breakpoint
CREATE TABLE "plugins" (
	"id" serial PRIMARY KEY NOT NULL,
	"space_id" integer NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"hooks" text[] NOT NULL,
	"timeout_ms" integer NOT NULL,
	"failure_mode" text NOT NULL,
	"active" boolean NOT NULL,
	"position" integer NOT NULL,
	"secret_sealed" text NOT NULL,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"deactivated_at" timestamp with time zone,
	"deactivated_reason" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "plugin_calls" ADD CONSTRAINT "plugin_calls_plugin_id_plugins_id_fk" FOREIGN KEY ("plugin_id") REFERENCES "public"."plugins"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plugins" ADD CONSTRAINT "plugins_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "plugin_calls_log_idx" ON "plugin_calls" USING btree ("plugin_id","called_at","id");--> statement-breakpoint
CREATE INDEX "plugin_calls_called_at_idx" ON "plugin_calls" USING btree ("called_at");--> statement-breakpoint
CREATE INDEX "plugins_space_idx" ON "plugins" USING btree ("space_id");