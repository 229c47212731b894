-- Email retention (EMAIL_RETENTION_DAYS, off by default): the email service deletes emails past
-- it, with their recipients, contents and events. A broadcast's counts are read from its emails,
-- so the pruner adds the deleted ones here first, by broadcast and status, and the broadcast
-- service adds these to what is left. A new empty table: no lock on existing ones.
-- No semicolon in these comments: `prisma migrate deploy` splits the file at every one.
CREATE TABLE "pruned_email_counts" (
    "broadcast_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "pruned_email_counts_pkey" PRIMARY KEY ("broadcast_id", "status")
);
