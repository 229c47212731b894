/**
 * The statements that end a claim (DeliveryStore: finish, releaseDisabled, failUnsent, unclaim).
 * Each acts only for the claim that wrote the row's lease (`locked_until`) and attempt number.
 */

/**
 * A delivery its webhook's disabling failed: `failed` with no answer and the reason given as
 * `reason` (DISABLED_REASON). The disabling keeps the lease of an attempt in flight, so such a
 * row can still belong to a claim.
 */
const failedByDisabling = (reason: string) =>
  `(d.status = 'failed' AND d.response_code IS NULL AND d.response_body = ${reason})`

/**
 * An attempt's outcome, per row of the parameters ($1-$6, $8: id, attempt, status, code, body,
 * delay in ms, lease; $7 DISABLED_REASON): while pending under this claim's lease, or a 2xx for a
 * delivery the disabling failed while its attempt was out.
 */
export const FINISH_SQL = `UPDATE webhook_deliveries d
  SET status = v.status, response_code = v.code, response_body = v.body, locked_until = NULL,
      next_attempt_at = CASE WHEN v.delay_ms IS NULL THEN NULL ELSE now() + v.delay_ms * interval '1 millisecond' END,
      completed_at = CASE WHEN v.status = 'pending' THEN NULL ELSE now() END
  FROM unnest($1::text[], $2::int[], $3::text[], $4::int[], $5::text[], $6::int[], $8::timestamptz[])
    AS v(id, attempt, status, code, body, delay_ms, lease)
  WHERE d.id = v.id AND d.attempt = v.attempt
    AND ((d.status = 'pending' AND d.locked_until = v.lease) OR (v.status = 'success' AND ${failedByDisabling('$7')}))
  RETURNING d.id`

/** The lease of a delivery the disabling failed, let go once its attempt is back ($1-$3 id, attempt, lease). */
export const RELEASE_DISABLED_SQL = `UPDATE webhook_deliveries d SET locked_until = NULL
  FROM unnest($1::text[], $2::int[], $3::timestamptz[]) AS v(id, attempt, lease)
  WHERE d.id = v.id AND d.attempt = v.attempt AND d.locked_until = v.lease AND ${failedByDisabling('$4')}`

/** One claimed delivery failed unsent, its attempt taken back ($1-$3 id, attempt, lease). */
export const FAIL_UNSENT_SQL = `UPDATE webhook_deliveries d
  SET status = 'failed', response_code = NULL, response_body = $4, next_attempt_at = NULL,
      completed_at = coalesce(d.completed_at, now()), locked_until = NULL, attempt = d.attempt - 1
  WHERE d.id = $1 AND d.attempt = $2 AND d.locked_until = $3::timestamptz
    AND (d.status = 'pending' OR ${failedByDisabling('$4')})`

/** Claimed deliveries given back unattempted ($1-$3 id, attempt, lease). */
export const UNCLAIM_SQL = `UPDATE webhook_deliveries d SET locked_until = NULL, attempt = d.attempt - 1
  FROM unnest($1::text[], $2::int[], $3::timestamptz[]) AS v(id, attempt, lease)
  WHERE d.id = v.id AND d.attempt = v.attempt AND d.locked_until = v.lease
    AND (d.status = 'pending' OR ${failedByDisabling('$4')})`
