/** The predicate of webhook_deliveries_pending_webhook_idx (migration 20261211000000), as written there. */
export const PENDING_BY_WEBHOOK = `d.status >= 'pending' AND d.status <= 'pending'`

/**
 * The claim of due webhook deliveries (DeliveryStore.claim), one statement. Parameters: $1/$2
 * the deliveries this replica holds per webhook (ids, counts), $3 the webhooks it holds its limit
 * of (saturated), $4 the limit per webhook, $5 how many to claim, $6 the lease in ms, $7 how many
 * candidates to rank, $8 how many of the oldest due rows the first look examines, $9 the reason a
 * delivery of a disabled webhook is failed with.
 *
 * Candidates are the oldest due rows that are not leased and whose webhook is not saturated:
 * - first from the front of the due rows in time order (`open_front`: the scan stops at $7 found
 *   or $8 examined, leased and saturated ones included): cheap, and enough whenever the front is
 *   not mostly other work. In the time index's own order (ties as they come, not by id): asked to
 *   break ties by id, the planner, once its statistics showed few distinct times, sorted the
 *   whole table instead;
 * - only when that gave fewer than $7 and there are $8 due rows or more, also up to $4 per
 *   webhook, found webhook by webhook (`hooks`: one descent of the index by webhook,
 *   webhook_deliveries_pending_webhook_idx, per webhook with pending deliveries, then `behind`:
 *   each one's oldest due rows). That is the case of a slow endpoint's backlog: its webhook
 *   saturated, its rows fill the front, and the rows of every other webhook lie behind them in
 *   time order. Filtering the front row by row instead (as this
 *   statement did) read the whole backlog at every claim, 30 ms for 100,000 rows and growing
 *   with it, while the other webhooks' deliveries waited; webhook by webhook costs the number of
 *   webhooks with pending deliveries, whatever their backlogs.
 * Which index each part uses is not left to the planner's statistics, which lag behind a queue
 * table's pending rows (analyzed when few were pending, it takes any plan through the pending
 * index as nearly free): `hooks` and `behind` say "pending" as the range PENDING_BY_WEBHOOK, the
 * predicate of the index by webhook and one the time-ordered index's (`status = 'pending'`) cannot
 * be proved from, so they cannot walk the time-ordered index through another webhook's backlog;
 * `picked` tests the state in a CASE, which proves no index's predicate: the few ids of
 * `eligible` are looked up by primary key (a plan scanning the pending index for them and
 * re-ranking the candidates for each row took 160 ms a claim).
 * The gate of `hooks` is a condition on the other CTEs only, so PostgreSQL checks it once and does
 * not run the descents when it is false (nor the count of due rows when the front was enough).
 *
 * Then at most `$4` minus what this replica holds per webhook (`ranked`, `eligible`), oldest
 * first; `picked` locks them (SKIP LOCKED: another replica's claim in progress keeps its rows) and
 * checks again that they are due and free; `claimed` leases them, counting an attempt except for
 * a row whose last claim's lease ran out with no outcome recorded (that claim's number is used
 * again: a replica killed with deliveries claimed ahead in memory had sent none of them).
 * A picked row whose webhook is disabled (`judged`: its webhook looked up by primary key, as the
 * final select does) is not leased but ended by `ended`: failed with $9 ("webhook disabled"),
 * counting no attempt, and the number of a claim whose lease ran out unrecorded taken back (as a
 * hand-back would: it will never be sent). Leased and counted, it waited for the replica to end
 * it: a disabling's chunked failing (leftover-deliveries.ts) that came first kept the count, for
 * good if the replica then stopped before ending it (a request never sent showed an attempt).
 * Ended rather than skipped: a skipped row stays due at the front of the time order, so a disabled
 * backlog the cleanup has not reached yet would fill `open_front` (every claim then taking the
 * webhook-by-webhook path; skipped only in `picked`, claiming nothing at all), and skipping it
 * there would look a webhook up for each of the $8 rows examined. Ended, the due ones of a webhook
 * whose disabling's cleanup a stopped replica left also end as they fall due.
 */
export const CLAIM_SQL = `
WITH RECURSIVE open_front AS (
  SELECT f.id, f.webhook_id, f.next_attempt_at FROM (
    SELECT d.id, d.webhook_id, d.next_attempt_at, d.locked_until FROM webhook_deliveries d
    WHERE d.status = 'pending' AND d.next_attempt_at <= now()
    ORDER BY d.next_attempt_at
    LIMIT $8
  ) f
  WHERE (f.locked_until IS NULL OR f.locked_until <= now()) AND f.webhook_id <> ALL($3::text[])
  ORDER BY f.next_attempt_at
  LIMIT $7
), hooks(webhook_id) AS (
  (SELECT d.webhook_id FROM webhook_deliveries d
   WHERE ${PENDING_BY_WEBHOOK}
     AND (SELECT count(*) FROM open_front) < $7
     AND (SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries x
                                WHERE x.status = 'pending' AND x.next_attempt_at <= now()
                                ORDER BY x.next_attempt_at LIMIT $8) due) >= $8
   ORDER BY d.webhook_id, d.next_attempt_at LIMIT 1)
  UNION ALL
  SELECT (SELECT d.webhook_id FROM webhook_deliveries d
          WHERE ${PENDING_BY_WEBHOOK} AND d.webhook_id > h.webhook_id
          ORDER BY d.webhook_id, d.next_attempt_at LIMIT 1)
  FROM hooks h WHERE h.webhook_id IS NOT NULL
), behind AS (
  SELECT b.id, b.webhook_id, b.next_attempt_at FROM hooks h
  CROSS JOIN LATERAL (
    SELECT d.id, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
    WHERE d.webhook_id = h.webhook_id AND ${PENDING_BY_WEBHOOK} AND d.next_attempt_at <= now()
      AND (d.locked_until IS NULL OR d.locked_until <= now())
    ORDER BY d.next_attempt_at, d.id
    LIMIT $4
  ) b
  WHERE h.webhook_id IS NOT NULL AND h.webhook_id <> ALL($3::text[])
), candidates AS (
  SELECT id, webhook_id, next_attempt_at FROM open_front
  UNION
  SELECT id, webhook_id, next_attempt_at FROM behind
  ORDER BY next_attempt_at, id
  LIMIT $7
), ranked AS (
  SELECT c.id, c.webhook_id,
         row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.next_attempt_at, c.id) AS rn
  FROM candidates c
), eligible AS MATERIALIZED (
  SELECT r.id FROM ranked r
  LEFT JOIN unnest($1::text[], $2::int[]) AS b(webhook_id, n) ON b.webhook_id = r.webhook_id
  WHERE r.rn <= $4 - coalesce(b.n, 0)
), picked AS (
  SELECT d.id, d.webhook_id FROM eligible e JOIN webhook_deliveries d ON d.id = e.id
  WHERE CASE d.status
    WHEN 'pending' THEN d.next_attempt_at <= now() AND (d.locked_until IS NULL OR d.locked_until <= now())
    ELSE false END
  ORDER BY d.next_attempt_at, d.id
  LIMIT $5
  FOR UPDATE SKIP LOCKED
), judged AS (
  SELECT p.id, coalesce(NOT w.enabled, false) AS disabled
  FROM picked p LEFT JOIN webhooks w ON w.id = p.webhook_id
), ended AS (
  UPDATE webhook_deliveries d
  SET status = 'failed', response_code = NULL, response_body = $9, next_attempt_at = NULL,
      completed_at = now(), locked_until = NULL,
      attempt = CASE WHEN d.locked_until IS NULL THEN d.attempt ELSE greatest(d.attempt - 1, 0) END
  FROM judged j WHERE d.id = j.id AND j.disabled
), claimed AS (
  UPDATE webhook_deliveries d
  SET locked_until = now() + $6::int * interval '1 millisecond',
      attempt = d.attempt + CASE WHEN d.locked_until IS NULL THEN 1 ELSE 0 END
  FROM judged j WHERE d.id = j.id AND NOT j.disabled
  RETURNING d.id, d.webhook_id, d.project_id, d.event_id, d.attempt, d.locked_until::text AS lease, d.payload
)
SELECT c.id, c.webhook_id AS "webhookId", c.project_id AS "projectId", c.event_id AS "eventId",
       c.attempt, c.lease, COALESCE(c.payload, wp.payload) AS payload, w.url, w.secret, w.enabled
FROM claimed c LEFT JOIN webhooks w ON w.id = c.webhook_id
LEFT JOIN webhook_payloads wp ON wp.event_id = c.event_id`
