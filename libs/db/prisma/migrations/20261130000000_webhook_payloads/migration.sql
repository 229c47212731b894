-- Webhook deliveries keep their event's payload once per event (bench/README.md, sixth session).
-- No semicolon in these comments: `prisma migrate deploy` splits the file at every one.
--
-- Each delivery row carried the whole event (about 500 bytes), once per webhook the event went to,
-- and a delivery row is written three times (fanned out, claimed, finished): both updates are
-- non-HOT and copied the payload into the new row version and the WAL. New deliveries leave
-- `payload` empty and the event's payload is stored once in webhook_payloads. Rows made before
-- keep theirs (the claim reads either).
CREATE TABLE "webhook_payloads" (
    "event_id" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_payloads_pkey" PRIMARY KEY ("event_id")
);

ALTER TABLE "webhook_deliveries" ALTER COLUMN "payload" DROP NOT NULL;
