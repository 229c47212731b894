-- Dashboard sessions signed out before they expired, kept until they would have expired.
-- No semicolon in these comments: `prisma migrate deploy` splits the file at every one.
--
-- A session is a signed cookie that every gateway replica accepts until its expiry, so a sign-out
-- is a list of refused session ids in each replica's memory, announced over core NATS. That list
-- was in memory only: a replica started after a sign-out (every replica, after a rollout) or one
-- whose NATS connection was down when it was announced accepted the session again, a copied
-- cookie included. Each replica now loads the unexpired rows at start and at each reconnect, and
-- deletes the expired ones now and then. The id alone is no credential (the cookie's MAC is).
-- A new empty table: no lock on existing ones.
CREATE TABLE "dashboard_signouts" (
    "session_id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "signed_out_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dashboard_signouts_pkey" PRIMARY KEY ("session_id")
);

CREATE INDEX "dashboard_signouts_expires_at_idx" ON "dashboard_signouts"("expires_at");
