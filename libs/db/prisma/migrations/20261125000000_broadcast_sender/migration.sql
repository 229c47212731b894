-- Broadcast sender: the caller a emails of a broadcast act as, fixed when it is sent (the project
-- slug resolves the current project limits, a broadcast sent with a test key sends test emails).
ALTER TABLE "broadcasts" ADD COLUMN "project_slug" TEXT;
ALTER TABLE "broadcasts" ADD COLUMN "mode" TEXT NOT NULL DEFAULT 'live';
ALTER TABLE "broadcasts" ADD COLUMN "api_key_id" TEXT;

-- CreateIndex: audience_in_use checks (a broadcast not yet sent or canceled uses the audience).
CREATE INDEX "broadcasts_audience_id_status_idx" ON "broadcasts"("audience_id", "status");
