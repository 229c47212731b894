-- When the due sweeper last wrote a dispatch message for a retry of the email. The lost-dispatch
-- sweep compares it (with queued_at, the first one) to the dispatchers' progress: compared with
-- queued_at alone, an email queued long ago whose retry had just been released looked lost, got
-- a second message under the same message id, and JetStream dropped that message as a duplicate
-- with any other email it carried. A nullable column without a default: no table rewrite.
ALTER TABLE "emails" ADD COLUMN "released_at" TIMESTAMPTZ(3);
