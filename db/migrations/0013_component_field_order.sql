ALTER TABLE "components" ADD COLUMN "field_order" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
-- Blueprints written before field_order existed keep the order they were answered in until now (jsonb's).
UPDATE "components" SET "field_order" = COALESCE((SELECT jsonb_agg(k ORDER BY n) FROM jsonb_object_keys("schema") WITH ORDINALITY AS o(k, n)), '[]'::jsonb);
