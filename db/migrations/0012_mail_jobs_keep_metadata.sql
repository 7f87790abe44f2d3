-- Hand-written (drizzle-kit generate --custom): mail jobs settled before the mail queue kept metadata only still hold
-- the rendered message (confirm and unsubscribe links). Keep what a settled mail job keeps now.
UPDATE "jobs" SET "payload" = jsonb_build_object(
  'to', "payload"->'message'->'to',
  'subject', "payload"->'message'->'subject',
  'message_id', NULL,
  'sent_at', CASE WHEN "status" = 'done' THEN to_jsonb("finished_at") END
)
WHERE "queue" = 'mail.send' AND "status" IN ('done', 'failed', 'cancelled') AND "payload" ? 'message';
