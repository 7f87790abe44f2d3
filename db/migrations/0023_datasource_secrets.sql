CREATE TABLE "datasource_push_signatures" (
	"datasource_id" integer NOT NULL,
	"signature" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "datasource_push_signatures_datasource_id_signature_pk" PRIMARY KEY("datasource_id","signature")
);
--> statement-breakpoint
ALTER TABLE "datasources" ADD COLUMN "url_sealed" text;--> statement-breakpoint
ALTER TABLE "datasource_push_signatures" ADD CONSTRAINT "datasource_push_signatures_datasource_id_datasources_id_fk" FOREIGN KEY ("datasource_id") REFERENCES "public"."datasources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "datasource_push_signatures_expires_idx" ON "datasource_push_signatures" USING btree ("expires_at");