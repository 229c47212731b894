import { ANALYTICS_COUNTERS, type AnalyticsTopEntry } from '@mailer/contracts'
import type { Db } from '@mailer/db'
import { aggregate, type BucketDelta, type DimensionDelta, uniqueByKey } from '../domain/aggregate.js'
import {
  capDimensions,
  DEFAULT_MAX_DIMENSION_VALUES,
  groupKey,
  OTHER_VALUE,
  rowKey,
  type StoredDimensions,
} from '../domain/dimension-cap.js'
import type { DimensionKind, Effect } from '../domain/event-effects.js'
import { emptyHistogram, type Histogram } from '../domain/histogram.js'
import type { BucketRow } from '../domain/report.js'
import type { Granularity } from '../domain/time-buckets.js'

type Tx = Pick<Db, '$queryRawUnsafe' | '$executeRawUnsafe'>

const COUNTER_COLUMNS = ANALYTICS_COUNTERS.join(', ')

// One statement for every bucket row of a batch: parallel arrays unnested in order (rows come
// sorted by primary key, so concurrent replicas lock them in the same order). Histograms travel
// as int[] literals ('{0,1,…}') or NULL when the batch delivered nothing in that bucket.
const UPSERT_BUCKETS = `
INSERT INTO analytics_buckets (project_id, granularity, bucket_start, ${COUNTER_COLUMNS}, delivery_hist)
SELECT t.p, t.g, t.s, ${ANALYTICS_COUNTERS.map((c) => `t.${c}`).join(', ')}, t.h::int[]
FROM unnest($1::text[], $2::text[], $3::timestamptz[], ${ANALYTICS_COUNTERS.map((_, i) => `$${i + 4}::int[]`).join(', ')}, $${ANALYTICS_COUNTERS.length + 4}::text[])
  WITH ORDINALITY AS t(p, g, s, ${COUNTER_COLUMNS}, h, ord)
ORDER BY t.ord
ON CONFLICT (project_id, granularity, bucket_start) DO UPDATE SET
  ${ANALYTICS_COUNTERS.map((c) => `${c} = analytics_buckets.${c} + EXCLUDED.${c}`).join(',\n  ')},
  delivery_hist = CASE
    WHEN EXCLUDED.delivery_hist IS NULL THEN analytics_buckets.delivery_hist
    WHEN analytics_buckets.delivery_hist IS NULL THEN EXCLUDED.delivery_hist
    ELSE ARRAY(
      SELECT coalesce(u.a, 0) + coalesce(u.b, 0)
      FROM unnest(analytics_buckets.delivery_hist, EXCLUDED.delivery_hist) WITH ORDINALITY AS u(a, b, i)
      ORDER BY u.i)
  END`

const UPSERT_DIMENSIONS = `
INSERT INTO analytics_dimensions (project_id, day, kind, value, count)
SELECT t.p, t.d, t.k, t.v, t.n
FROM unnest($1::text[], $2::date[], $3::text[], $4::text[], $5::int[]) WITH ORDINALITY AS t(p, d, k, v, n, ord)
ORDER BY t.ord
ON CONFLICT (project_id, day, kind, value) DO UPDATE SET count = analytics_dimensions.count + EXCLUDED.count`

// What the table already holds for a batch's dimension rows, in one round trip: per (project,
// day, kind) the distinct values stored (the overflow row left out; counting stops at the cap, an
// index-only walk of the primary key), and which of the batch's values already have a row.
const STORED_DIMENSIONS = `
WITH b AS (SELECT * FROM unnest($1::text[], $2::date[], $3::text[], $4::text[]) AS b(p, d, k, v))
SELECT g.p AS "projectId", to_char(g.d, 'YYYY-MM-DD') AS "day", g.k AS "kind", NULL::text AS "value",
  (SELECT count(*) FROM (
     SELECT 1 FROM analytics_dimensions a
     WHERE a.project_id = g.p AND a.day = g.d AND a.kind = g.k AND a.value <> $5 LIMIT $6) s)::int AS "n"
FROM (SELECT DISTINCT p, d, k FROM b) g
UNION ALL
SELECT a.project_id, to_char(a.day, 'YYYY-MM-DD'), a.kind, a.value, 0
FROM b JOIN analytics_dimensions a ON a.project_id = b.p AND a.day = b.d AND a.kind = b.k AND a.value = b.v`

const MARK_PROCESSED = `
INSERT INTO analytics_processed_events (event_id)
SELECT k FROM unnest($1::text[]) AS k ORDER BY k
ON CONFLICT DO NOTHING
RETURNING event_id AS "key"`

const histLiteral = (h: Histogram | null): string | null => (h ? `{${h.join(',')}}` : null)

async function upsertBuckets(tx: Tx, rows: BucketDelta[]): Promise<void> {
  if (rows.length === 0) return
  await tx.$executeRawUnsafe(
    UPSERT_BUCKETS,
    rows.map((r) => r.projectId),
    rows.map((r) => r.granularity),
    rows.map((r) => r.start.toISOString()),
    ...ANALYTICS_COUNTERS.map((c) => rows.map((r) => r.counts[c])),
    rows.map((r) => histLiteral(r.hist)),
  )
}

async function upsertDimensions(tx: Tx, rows: DimensionDelta[]): Promise<void> {
  if (rows.length === 0) return
  await tx.$executeRawUnsafe(
    UPSERT_DIMENSIONS,
    rows.map((r) => r.projectId),
    rows.map((r) => r.day),
    rows.map((r) => r.kind),
    rows.map((r) => r.value),
    rows.map((r) => r.count),
  )
}

async function storedDimensions(tx: Tx, rows: DimensionDelta[], max: number): Promise<StoredDimensions> {
  const found = await tx.$queryRawUnsafe<
    Array<{ projectId: string; day: string; kind: DimensionKind; value: string | null; n: number }>
  >(
    STORED_DIMENSIONS,
    rows.map((r) => r.projectId),
    rows.map((r) => r.day),
    rows.map((r) => r.kind),
    rows.map((r) => r.value),
    OTHER_VALUE,
    max,
  )
  const distinct = new Map<string, number>()
  const present = new Set<string>()
  for (const f of found) {
    if (f.value === null) distinct.set(groupKey(f), Number(f.n))
    else present.add(rowKey({ ...f, value: f.value }))
  }
  return { distinct, present }
}

/** Filters the WHERE clause to one project, or to all projects when `projectId` is null. */
const projectFilter = (projectId: string | null, param: number): string =>
  projectId ? `AND project_id = $${param}` : ''
const withProject = (projectId: string | null, params: unknown[]): unknown[] =>
  projectId ? [...params, projectId] : params

/** Reads and writes `analytics_buckets`, `analytics_dimensions` and `analytics_processed_events`. */
export class AggregateStore {
  /**
   * `maxDimensionValues`: most distinct values kept per (project, UTC day, kind); the rest count
   * under `OTHER_VALUE`. Decided per batch with one read, so replicas writing the same day at the
   * same time can each admit the last free places: the cap is approximate, by a batch's new values
   * at most per replica.
   */
  constructor(
    private readonly db: Db,
    private readonly maxDimensionValues = DEFAULT_MAX_DIMENSION_VALUES,
  ) {}

  /**
   * Applies a batch in one transaction: records each effect's idempotency key, then adds only the
   * effects whose key was new to the hour/day buckets and the dimensions. A redelivered event, or
   * a second event for an outcome already counted, changes nothing. Returns the effects counted.
   */
  async apply(effects: Effect[]): Promise<Effect[]> {
    const unique = uniqueByKey(effects)
    if (unique.length === 0) return []
    return this.db.$transaction(
      async (tx) => {
        const inserted = await tx.$queryRawUnsafe<Array<{ key: string }>>(
          MARK_PROCESSED,
          unique.map((e) => e.key),
        )
        const fresh = new Set(inserted.map((r) => r.key))
        const counted = unique.filter((e) => fresh.has(e.key))
        const { buckets, dimensions } = aggregate(counted)
        await upsertBuckets(tx, buckets)
        if (dimensions.length > 0) {
          const stored = await storedDimensions(tx, dimensions, this.maxDimensionValues)
          await upsertDimensions(tx, capDimensions(dimensions, stored, this.maxDimensionValues))
        }
        return counted
      },
      { maxWait: 10_000, timeout: 30_000 },
    )
  }

  /** Bucket rows of one granularity from `from` to `to` (inclusive), summed over projects. */
  async buckets(
    projectId: string | null,
    granularity: Granularity,
    from: Date,
    to: Date,
  ): Promise<BucketRow[]> {
    const rows = await this.db.$queryRawUnsafe<Array<Record<string, unknown>>>(
      `SELECT bucket_start AS "start", ${ANALYTICS_COUNTERS.map((c) => `sum(${c})::int8 AS "${c}"`).join(', ')}
       FROM analytics_buckets
       WHERE granularity = $1 AND bucket_start >= $2::timestamptz AND bucket_start <= $3::timestamptz ${projectFilter(projectId, 4)}
       GROUP BY bucket_start ORDER BY bucket_start`,
      ...withProject(projectId, [granularity, from.toISOString(), to.toISOString()]),
    )
    return rows.map((r) => {
      const row = { start: new Date(r.start as Date) } as BucketRow
      for (const c of ANALYTICS_COUNTERS) row[c] = Number(r[c] ?? 0)
      return row
    })
  }

  /** The delivery-time histograms of the same rows, summed slot by slot. */
  async histogram(
    projectId: string | null,
    granularity: Granularity,
    from: Date,
    to: Date,
  ): Promise<Histogram> {
    const rows = await this.db.$queryRawUnsafe<Array<{ slot: number; n: bigint | number }>>(
      `SELECT (u.i - 1)::int AS slot, sum(u.v)::int8 AS n
       FROM analytics_buckets b CROSS JOIN LATERAL unnest(b.delivery_hist) WITH ORDINALITY AS u(v, i)
       WHERE b.granularity = $1 AND b.bucket_start >= $2::timestamptz AND b.bucket_start <= $3::timestamptz
         AND b.delivery_hist IS NOT NULL ${projectFilter(projectId, 4)}
       GROUP BY u.i`,
      ...withProject(projectId, [granularity, from.toISOString(), to.toISOString()]),
    )
    const hist = emptyHistogram()
    for (const r of rows) hist[r.slot] = (hist[r.slot] ?? 0) + Number(r.n)
    return hist
  }

  /**
   * The `limit` most counted values of a dimension from `fromDay` to `toDay` (inclusive), ties by
   * value; the overflow row (values past the per-day cap) is no value and is left out. Bounded
   * above like the buckets: an event dated after today (a clock ahead) counts in neither until its
   * day comes.
   */
  async top(
    projectId: string | null,
    kind: DimensionKind,
    fromDay: string,
    toDay: string,
    limit = 10,
  ): Promise<AnalyticsTopEntry[]> {
    const rows = await this.db.$queryRawUnsafe<Array<{ value: string; count: bigint | number }>>(
      `SELECT value, sum(count)::int8 AS count
       FROM analytics_dimensions
       WHERE kind = $1 AND day >= $2::date AND day <= $4::date AND value <> $5 ${projectFilter(projectId, 6)}
       GROUP BY value ORDER BY sum(count) DESC, value ASC LIMIT $3`,
      ...withProject(projectId, [kind, fromDay, limit, toDay, OTHER_VALUE]),
    )
    return rows.map((r) => ({ value: r.value, count: Number(r.count) }))
  }

  /**
   * Deletes per-day dimension rows of UTC days before the last `days` (the longest range): no
   * report reads them again, and their number grows with the tag values sent (a tag per order
   * or user makes a row per email), not with time. A chunk at a time; returns how many.
   */
  async pruneDimensions(days: number, chunk = 10_000): Promise<number> {
    let total = 0
    for (;;) {
      const n = await this.db.$executeRawUnsafe(
        `DELETE FROM analytics_dimensions WHERE ctid IN (
           SELECT ctid FROM analytics_dimensions
           WHERE day < (now() AT TIME ZONE 'UTC')::date - $1::int LIMIT $2)`,
        days,
        chunk,
      )
      total += n
      if (n < chunk) return total
    }
  }

  /** Deletes idempotency keys older than `days`, a chunk at a time; returns how many. */
  async pruneProcessed(days: number, chunk = 10_000): Promise<number> {
    let total = 0
    for (;;) {
      const n = await this.db.$executeRawUnsafe(
        `DELETE FROM analytics_processed_events WHERE event_id IN (
           SELECT event_id FROM analytics_processed_events
           WHERE processed_at < now() - ($1::int * interval '1 day') LIMIT $2)`,
        days,
        chunk,
      )
      total += n
      if (n < chunk) return total
    }
  }
}
