-- Failed dashboard sign-ins per client address, for the window they count in.
-- No semicolon in these comments: `prisma migrate deploy` splits the file at every one.
--
-- The sign-in allows 10 failures per address in 5 minutes, since the admin key is chosen by the
-- operator and may be short. The counts were in each gateway replica's memory: behind a load
-- balancer N replicas gave a guesser N times the tries, and a restart or rollout forgot them.
-- A row is one address's current window, counted by one upsert per attempt (checked before the
-- key is compared) and deleted by a sign-in with the right key. Every replica deletes the rows
-- whose window has ended now and then.
-- A new empty table: no lock on existing ones.
CREATE TABLE "dashboard_signin_failures" (
    "address" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL,
    "window_ends_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "dashboard_signin_failures_pkey" PRIMARY KEY ("address")
);

CREATE INDEX "dashboard_signin_failures_window_ends_at_idx" ON "dashboard_signin_failures"("window_ends_at");
