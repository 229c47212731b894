-- CreateIndex: keyset pagination of the admin suppression list (created_at DESC, address DESC).
CREATE INDEX "suppressions_created_at_address_idx" ON "suppressions"("created_at" DESC, "address" DESC);
