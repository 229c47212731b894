-- Emails deleted by EMAIL_RETENTION_DAYS while still inside GET /v1/admin/stats' windows (a
-- retention under 30 days): the pruner adds each here, by project, status and exact creation
-- time, in the statement that deletes it, and the stats add these to the emails still kept, so a
-- window counts the same whatever the retention. Rows older than the windows (31 days, a day of
-- margin for clocks) are deleted by the pruner: the table holds at most 30 days of deletions.
-- Keyed by time first: the stats read and the cleanup are both ranges of created_at.
-- A new empty table: no lock on existing ones.
-- No semicolon in these comments: `prisma migrate deploy` splits the file at every one.
CREATE TABLE "pruned_email_tallies" (
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "project_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "pruned_email_tallies_pkey" PRIMARY KEY ("created_at", "project_id", "status")
);
