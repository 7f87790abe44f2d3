CREATE TABLE "datasource_pulls" (
	"datasource_id" integer PRIMARY KEY NOT NULL,
	"document" json NOT NULL,
	"pulled_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "datasource_pulls" ADD CONSTRAINT "datasource_pulls_datasource_id_datasources_id_fk" FOREIGN KEY ("datasource_id") REFERENCES "public"."datasources"("id") ON DELETE cascade ON UPDATE no action;