-- Analytics buckets by granularity and start, whatever the project: the all-projects report
-- (GET /v1/admin/analytics without ?project) reads the last days of every project, and the
-- primary key, which leads with the project, let it do so only by reading the whole table, whose
-- hourly and daily rows are kept for good (a full scan per request, growing every hour).
-- No semicolon in these comments: `prisma migrate deploy` splits the file at every one.
--
-- Ingestion updates counters only, never these columns, so its updates stay HOT: the index gets
-- an entry per new bucket row (one per project and hour or day). Building it reads the table
-- and holds ingestion's writes meanwhile (seconds per million rows): docs/operations.md.
CREATE INDEX "analytics_buckets_granularity_bucket_start_idx" ON "analytics_buckets"("granularity", "bucket_start");
