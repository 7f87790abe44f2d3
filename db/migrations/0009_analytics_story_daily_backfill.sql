-- Hand-written (drizzle-kit generate --custom): the per-(Space, day, Story) totals of the days rolled up before
-- analytics_story_daily existed, so rankings over those days read the same numbers as the wide rollups.
INSERT INTO "analytics_story_daily" ("space_id", "day", "story_uuid", "mounts")
SELECT "space_id", "day", "story_uuid", sum("mounts")::int FROM "analytics_daily" GROUP BY 1, 2, 3
ON CONFLICT DO NOTHING;
