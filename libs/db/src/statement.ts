import type { QueryConfig } from 'pg'

/**
 * A named statement for the hot paths' plain-pg queries: each pooled connection parses and plans
 * it once, then only binds and runs it. Those statements are multi-table CTEs whose planning cost
 * more than running them for a request or two (PostgreSQL CPU per accepted email at concurrency
 * 8 fell from 1.59 to 0.74 ms; bench/README.md). A name must always go with the same text (pg
 * refuses to reuse a prepared name for another statement on one connection): name and text are
 * constants, never built from a call's data.
 *
 * Only for statements whose best plan does not depend on the parameters: after five runs
 * PostgreSQL may switch a named statement to a generic plan. The accept path's statements (JSON
 * record sets, key lookups) keep their plan; the dispatcher's and the webhook service's claims and
 * array-driven updates did not (4 to 20 times slower with a generic plan, seen with
 * BENCH_PG_STATS=1), so those stay unnamed and are planned for their parameters every time.
 */
export function statement(name: string, text: string): (values: unknown[]) => QueryConfig {
  return (values) => ({ name, text, values })
}
