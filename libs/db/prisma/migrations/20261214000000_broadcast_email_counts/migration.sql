-- A broadcast's email counts by status, kept here by the broadcast service instead of being
-- counted from its emails at every list or get: a page of large broadcasts counted tens of
-- millions of emails per read, past the query timeout. A background refresher of the broadcast
-- service recounts each broadcast when due_at comes (often while it sends and shortly after,
-- more rarely as it ages), and the sender recounts it as it finishes it. While a refresher
-- recounts one, due_at is pushed past the recount's end: it is that refresher's lease, and its
-- write of the counts is conditional on it (services/broadcast/src/infra/count-store.ts).
CREATE TABLE "broadcast_email_counts" (
    "broadcast_id" TEXT NOT NULL,
    "counts" JSONB NOT NULL DEFAULT '{}',
    "counted_at" TIMESTAMPTZ(3),
    "due_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "broadcast_email_counts_pkey" PRIMARY KEY ("broadcast_id")
);

CREATE INDEX "broadcast_email_counts_due_at_idx" ON "broadcast_email_counts"("due_at");

-- Broadcasts sent before this migration: never counted (counted_at NULL) and due at once, the
-- newest first (refreshers take the earliest due_at first, and the dashboard shows the newest):
-- due at 1970 plus the broadcast's age. Drafts have no emails, and get a row when sent.
INSERT INTO "broadcast_email_counts" ("broadcast_id", "due_at")
SELECT "id", to_timestamp(0) + (now() - "created_at") FROM "broadcasts" WHERE "status" <> 'draft';
