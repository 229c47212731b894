// Prisma codes for "the database is not there right now": can't reach, timed out, closed the
// connection, pool exhausted. Raw queries through the pg adapter often carry no code (`N/A`), so
// the driver's own messages are matched too, with the statement time-outs (DATABASE_QUERY_TIMEOUT_MS:
// PostgreSQL's cancel, or node-postgres giving up on a server that answers nothing), which were
// answered 500 `internal`.
const CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024'])
const MESSAGES =
  /Can't reach database server|Server has closed the connection|Connection terminated|ECONNREFUSED|ECONNRESET|terminating connection due to administrator command|the database system is (starting up|shutting down|in recovery mode)|timeout exceeded when trying to connect|Timed out fetching a new connection|Query read timeout|canceling statement due to statement timeout/i

/**
 * True when `err` says PostgreSQL is unreachable or restarting (a retry shortly may succeed), as
 * opposed to a bad query or a constraint: such failures become 503 `service_unavailable`.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (
    let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 4;
    depth++
  ) {
    if (typeof e.code === 'string' && CODES.has(e.code)) return true
    if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true
    e = e.cause as typeof e
  }
  return false
}
