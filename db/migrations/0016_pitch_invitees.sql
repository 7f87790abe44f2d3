CREATE TABLE "pitch_invitees" (
	"id" serial PRIMARY KEY NOT NULL,
	"tenant_id" integer NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"created_by" integer,
	"created_at" timestamp with time zone NOT NULL,
	"provisioned_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"demo_tenant_id" integer,
	"demo_space_slug" text,
	"ended_at" timestamp with time zone,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "pitch_invitees" ADD CONSTRAINT "pitch_invitees_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pitch_invitees" ADD CONSTRAINT "pitch_invitees_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pitch_invitees" ADD CONSTRAINT "pitch_invitees_demo_tenant_id_tenants_id_fk" FOREIGN KEY ("demo_tenant_id") REFERENCES "public"."tenants"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "pitch_invitees_slug_key" ON "pitch_invitees" USING btree ("slug");--> statement-breakpoint
CREATE INDEX "pitch_invitees_tenant_idx" ON "pitch_invitees" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "pitch_invitees_expires_idx" ON "pitch_invitees" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "pitch_invitees_demo_tenant_idx" ON "pitch_invitees" USING btree ("demo_tenant_id");