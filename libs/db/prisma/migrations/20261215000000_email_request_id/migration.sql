-- The X-Request-Id of the request that accepted the email (a broadcast's: its chunk's), so the
-- dispatcher's log lines for it carry the id the caller saw in the 202 (they carried the email id
-- under that name). Nullable: emails accepted before this migration have none. No index: it is
-- read with the email's row, never searched by.
ALTER TABLE "emails" ADD COLUMN "request_id" TEXT;
