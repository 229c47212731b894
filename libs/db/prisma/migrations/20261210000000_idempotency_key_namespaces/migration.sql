-- Idempotency keys in two namespaces per project: the keys of API sends (any caller's) and the
-- keys the email service gives a broadcast's emails (broadcast_id set). A send whose key had the
-- form of a broadcast email's took that contact's email (the broadcast skipped the contact), or
-- answered with the broadcast's email: keys of both kinds were unique together.
-- No semicolon in these comments: `prisma migrate deploy` splits the file at every one.
--
-- The namespace is the index's last column, so a lookup by project and key alone (the previous
-- release's, during the rollout) still finds its rows through the first two. The new index is
-- built before the old one goes, so keys stay unique throughout. Building it reads the whole
-- table and holds writes to emails meanwhile (seconds per million rows, docs/operations.md).
CREATE UNIQUE INDEX "emails_project_id_idempotency_key_namespace_key" ON "emails"("project_id", "idempotency_key", ("broadcast_id" IS NOT NULL)) WHERE "idempotency_key" IS NOT NULL;
DROP INDEX "emails_project_id_idempotency_key_key";
