CREATE TABLE "billing_provider_events" (
	"event_id" text PRIMARY KEY NOT NULL,
	"tenant_id" integer NOT NULL,
	"processed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tenant_plans" (
	"tenant_id" integer PRIMARY KEY NOT NULL,
	"plan" text NOT NULL,
	"changed_at" timestamp with time zone NOT NULL,
	"last_provider_event_id" text
);
--> statement-breakpoint
CREATE TABLE "usage_counters" (
	"scope" text NOT NULL,
	"scope_id" integer NOT NULL,
	"kind" text NOT NULL,
	"period" text DEFAULT '' NOT NULL,
	"n" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_counters_scope_scope_id_kind_period_pk" PRIMARY KEY("scope","scope_id","kind","period")
);
--> statement-breakpoint
ALTER TABLE "tenant_plans" ADD CONSTRAINT "tenant_plans_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Usage counters start from a one-time count of what exists (docs/billing.md): this migration runs under the
-- migration lock, so no write can slip between the count and the first counted change.
INSERT INTO "usage_counters" ("scope", "scope_id", "kind", "period", "n")
  SELECT 'tenant', "tenant_id", 'spaces', '', count(*) FROM "spaces" WHERE "archived_at" IS NULL GROUP BY "tenant_id";
--> statement-breakpoint
INSERT INTO "usage_counters" ("scope", "scope_id", "kind", "period", "n")
  SELECT 'space', "space_id", 'stories', '', count(*) FROM "stories" WHERE "status" <> 'archived' GROUP BY "space_id";
--> statement-breakpoint
INSERT INTO "usage_counters" ("scope", "scope_id", "kind", "period", "n")
  SELECT 'space', "space_id", 'members', '', count(*) FROM "memberships" GROUP BY "space_id";
--> statement-breakpoint
INSERT INTO "usage_counters" ("scope", "scope_id", "kind", "period", "n")
  SELECT 'tenant', s."tenant_id", 'asset_bytes', '', sum(a."size") FROM "assets" a JOIN "spaces" s ON s."id" = a."space_id" GROUP BY s."tenant_id";
