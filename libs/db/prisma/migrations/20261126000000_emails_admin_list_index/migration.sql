-- CreateIndex: the admin email list across projects (created_at DESC, id DESC) and the admin
-- stats scan of the last 30 days.
CREATE INDEX "emails_created_at_id_idx" ON "emails"("created_at" DESC, "id" DESC);
