CREATE TABLE "search_snapshots" (
	"space_id" integer PRIMARY KEY NOT NULL,
	"format" integer NOT NULL,
	"cv" bigint NOT NULL,
	"documents" integer NOT NULL,
	"data" "bytea" NOT NULL,
	"written_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "search_snapshots" ADD CONSTRAINT "search_snapshots_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "search_snapshots" ALTER COLUMN "data" SET STORAGE EXTERNAL;
