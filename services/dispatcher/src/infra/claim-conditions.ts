/**
 * The state tests of the dispatcher's statements on `emails`, written as CASE expressions on
 * purpose: PostgreSQL cannot prove from a CASE that a row matches a partial index's predicate, so
 * these statements find their rows by primary key only (a few ids each).
 *
 * Written as plain conditions (`status IN ('queued', 'deferred') AND next_attempt_at IS NULL`,
 * `status = 'sending'`), they matched `emails_pending_idx` and `emails_sending_idx`, and the
 * planner chose those whenever its statistics said few emails were pending or sending. They say
 * so most of the time, and keep saying it while a backlog builds: a broadcast of 100,000 emails
 * is 1 % of a table of ten million, far below what makes autovacuum analyze it again. Each claim
 * of ten emails then read the whole backlog's index entries and rows (52 ms with 100,000 queued,
 * against 0.1 ms by primary key: bench/README.md), so a backlog took time quadratic in its size
 * to drain, and the outcome write read every `sending` entry of the index, live or dead.
 */

/** Claimable: queued or deferred and not waiting for a retry, or `sending` under a stale claim. */
export function claimableSql(staleSecondsParam: string): string {
  return `CASE status
    WHEN 'queued' THEN next_attempt_at IS NULL
    WHEN 'deferred' THEN next_attempt_at IS NULL
    WHEN 'sending' THEN claimed_at < now() - make_interval(secs => ${staleSecondsParam}::float8)
    ELSE false END`
}

/** Still held by the claim whose token (`claimed_at`) is given. */
export function claimHeldSql(alias: string, claimedAt: string): string {
  return `CASE ${alias}.status WHEN 'sending' THEN ${alias}.claimed_at = ${claimedAt} ELSE false END`
}
