ALTER TABLE "assets" ADD COLUMN "store" text DEFAULT 'postgres' NOT NULL;
-- A constant default: Postgres 11+ records it in the catalog, the table is not rewritten and writes are not blocked.
