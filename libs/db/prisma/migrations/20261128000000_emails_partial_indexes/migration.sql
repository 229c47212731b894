-- Partial indexes on emails (bench/README.md, fourth session).
-- No semicolon in these comments: `prisma migrate deploy` splits the file at every one.
--
-- Every update of an email's status is a non-HOT update (status is indexed), and a non-HOT update
-- adds an entry for the new row version to every index of the table whose predicate the new
-- version meets. An email is written three times on its way out (accepted, claimed, sent), so each
-- full index on emails took three entries per email. These four only need the rows they are
-- asked about:
--   - the due sweeper and the queue gauges ask for queued and deferred emails,
--   - the scheduler asks for scheduled emails,
--   - broadcast counters ask for a broadcast's emails,
--   - idempotency keys are looked up and kept unique only where an email has one.
-- A claimed, sent or failed email, a transactional email and one without a key no longer enter
-- them (10 of an email's 21 index entries on emails). Prisma's schema cannot declare a partial
-- index: schema.prisma says so where they were declared, and `prisma migrate diff` leaves partial
-- indexes alone.
--
-- Building them reads the whole table and holds writes to emails meanwhile (seconds per million
-- rows), docs/operations.md says so for upgrades.
DROP INDEX "emails_status_scheduled_at_idx";
CREATE INDEX "emails_scheduled_idx" ON "emails"("scheduled_at") WHERE "status" = 'scheduled';

DROP INDEX "emails_status_next_attempt_at_idx";
CREATE INDEX "emails_pending_idx" ON "emails"("status", "next_attempt_at") WHERE "status" IN ('queued', 'deferred');

DROP INDEX "emails_broadcast_id_status_idx";
CREATE INDEX "emails_broadcast_id_status_idx" ON "emails"("broadcast_id", "status") WHERE "broadcast_id" IS NOT NULL;

DROP INDEX "emails_project_id_idempotency_key_key";
CREATE UNIQUE INDEX "emails_project_id_idempotency_key_key" ON "emails"("project_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL;
