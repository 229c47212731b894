-- Pending webhook deliveries get a partial index (bench/README.md, sixth session).
-- No semicolon in these comments: `prisma migrate deploy` splits the file at every one.
--
-- The claim loop, the next-due timer and the pending gauge ask only for pending deliveries. The
-- full (status, next_attempt_at) index took an entry for every row version of every delivery ever
-- made: a delivery is written three times (fanned out, claimed, finished), each a non-HOT update,
-- so the index grew by three entries per delivery and kept the delivered ones for as long as the
-- deliveries are kept. The partial index holds the pending ones only: a finished delivery leaves
-- it, and its size follows the backlog, not the history. Prisma's schema cannot declare a partial
-- index: schema.prisma says so where it was declared.
--
-- Building it reads the whole table and holds writes to webhook_deliveries meanwhile (seconds per
-- million rows), docs/operations.md says so for upgrades.
DROP INDEX "webhook_deliveries_status_next_attempt_at_idx";
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries"("next_attempt_at") WHERE "status" = 'pending';
