-- Pending webhook deliveries by webhook, oldest due first: the delivery claim's way past a slow
-- endpoint's backlog (services/webhook/src/infra/delivery-claim-sql.ts). With only the index in
-- time order, every claim read the whole backlog of a webhook whose slots were full to reach the
-- other webhooks' rows behind it.
-- No semicolon in these comments: `prisma migrate deploy` splits the file at every one.
--
-- Partial, like webhook_deliveries_pending_idx: a delivery leaves it at its final outcome.
-- Building it reads the whole table and holds writes to webhook_deliveries meanwhile (seconds
-- per million rows): docs/operations.md says so for upgrades.
CREATE INDEX "webhook_deliveries_pending_webhook_idx" ON "webhook_deliveries"("webhook_id", "next_attempt_at", "id") WHERE "status" = 'pending';
