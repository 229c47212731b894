-- What stays of a deleted contact: its id, a SHA-256 of its address (not the address), and
-- whether it had unsubscribed. Unsubscribe links name a contact by id, so a link of a deleted
-- contact still reaches the contact later created again with that address, and an address that
-- unsubscribed stays unsubscribed when it is deleted and added again (a CRM sync that deletes
-- and re-imports its list): services/broadcast/src/infra/contact-tombstones.ts.
-- No semicolon in these comments: `prisma migrate deploy` splits the file at every one.
CREATE TABLE "contact_tombstones" (
    "contact_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "email_hash" BYTEA NOT NULL,
    "unsubscribed" BOOLEAN NOT NULL,
    "link_used_at" TIMESTAMPTZ(3),
    "deleted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "contact_tombstones_pkey" PRIMARY KEY ("contact_id")
);

CREATE INDEX "contact_tombstones_project_id_email_hash_deleted_at_idx" ON "contact_tombstones"("project_id", "email_hash", "deleted_at" DESC);
