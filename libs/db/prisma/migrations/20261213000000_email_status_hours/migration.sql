-- GET /v1/admin/stats read every email of the last 30 days on every call (30 million rows at a
-- million emails a day: past the statement time-out). It now reads email_status_hours, emails by
-- project, status and hour of creation, which the email service's stats refresher recomputes
-- hour by hour (the recent hours every minute, the others every hour). email_stats_refresh holds
-- the refresher's lease (one replica at a time) and when its last pass over every hour finished:
-- with no row yet, the first refresh after the upgrade computes the whole 31 days.
-- New empty tables: no lock on existing ones.
CREATE TABLE "email_status_hours" (
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "project_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "email_status_hours_pkey" PRIMARY KEY ("hour","project_id","status")
);

CREATE TABLE "email_stats_refresh" (
    "id" TEXT NOT NULL,
    "holder" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "full_refreshed_at" TIMESTAMPTZ(3),

    CONSTRAINT "email_stats_refresh_pkey" PRIMARY KEY ("id")
);

-- The pruner tallied deleted emails by creation time to the millisecond, about a row per email
-- (24 million rows at a week's retention). It now tallies them by hour, and the rows it wrote before
-- are summed into their hours here (at most 31 days of them: it trims older ones).
WITH moved AS (
    DELETE FROM "pruned_email_tallies"
    WHERE "created_at" <> date_trunc('hour', "created_at" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
    RETURNING "created_at", "project_id", "status", "count"
)
INSERT INTO "pruned_email_tallies" ("created_at", "project_id", "status", "count")
SELECT date_trunc('hour', "created_at" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', "project_id", "status", sum("count")::int
FROM moved GROUP BY 1, 2, 3
ON CONFLICT ("created_at", "project_id", "status") DO UPDATE SET "count" = "pruned_email_tallies"."count" + excluded."count";
