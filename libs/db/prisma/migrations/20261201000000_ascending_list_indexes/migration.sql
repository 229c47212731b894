-- List indexes in ascending order (bench/README.md, seventh session).
-- No semicolon in these comments: `prisma migrate deploy` splits the file at every one.
--
-- The lists read newest first (ORDER BY created_at DESC, id DESC), and these indexes were declared
-- in that order. A B-tree is read backwards as cheaply as forwards, so the order only matters to
-- writes, and there it is the wrong one: every new row's entry is the smallest key (of its
-- project), so it lands on the leftmost leaf, where PostgreSQL neither takes its fast path for
-- appends nor packs pages when it splits them (a 50/50 split, and the left half fills and splits
-- again, leaving half-empty pages behind). In ascending order a new entry is an append: the
-- rightmost leaf, cached, split 90/10. For a batch of emails the split records alone were 14 % of
-- the WAL.
--
-- Each index is built under a new name first, then the old one is dropped and the new one takes
-- its name, so the lists never go without one. Building reads the whole table and holds writes
-- to it meanwhile (seconds per million rows): docs/operations.md says so for upgrades.
CREATE INDEX "emails_project_id_created_at_id_asc" ON "emails"("project_id", "created_at", "id");
DROP INDEX "emails_project_id_created_at_id_idx";
ALTER INDEX "emails_project_id_created_at_id_asc" RENAME TO "emails_project_id_created_at_id_idx";

CREATE INDEX "emails_created_at_id_asc" ON "emails"("created_at", "id");
DROP INDEX "emails_created_at_id_idx";
ALTER INDEX "emails_created_at_id_asc" RENAME TO "emails_created_at_id_idx";

CREATE INDEX "email_events_project_id_created_at_id_asc" ON "email_events"("project_id", "created_at", "id");
DROP INDEX "email_events_project_id_created_at_id_idx";
ALTER INDEX "email_events_project_id_created_at_id_asc" RENAME TO "email_events_project_id_created_at_id_idx";

CREATE INDEX "email_events_created_at_id_asc" ON "email_events"("created_at", "id");
DROP INDEX "email_events_created_at_id_idx";
ALTER INDEX "email_events_created_at_id_asc" RENAME TO "email_events_created_at_id_idx";

CREATE INDEX "webhook_deliveries_webhook_id_created_at_id_asc" ON "webhook_deliveries"("webhook_id", "created_at", "id");
DROP INDEX "webhook_deliveries_webhook_id_created_at_id_idx";
ALTER INDEX "webhook_deliveries_webhook_id_created_at_id_asc" RENAME TO "webhook_deliveries_webhook_id_created_at_id_idx";

CREATE INDEX "contacts_project_id_created_at_id_asc" ON "contacts"("project_id", "created_at", "id");
DROP INDEX "contacts_project_id_created_at_id_idx";
ALTER INDEX "contacts_project_id_created_at_id_asc" RENAME TO "contacts_project_id_created_at_id_idx";

CREATE INDEX "broadcasts_project_id_created_at_id_asc" ON "broadcasts"("project_id", "created_at", "id");
DROP INDEX "broadcasts_project_id_created_at_id_idx";
ALTER INDEX "broadcasts_project_id_created_at_id_asc" RENAME TO "broadcasts_project_id_created_at_id_idx";

CREATE INDEX "suppressions_created_at_address_asc" ON "suppressions"("created_at", "address");
DROP INDEX "suppressions_created_at_address_idx";
ALTER INDEX "suppressions_created_at_address_asc" RENAME TO "suppressions_created_at_address_idx";
