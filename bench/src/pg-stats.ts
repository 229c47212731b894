import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { ensureDir, ROOT } from './stack.js'

/** Server settings that make PostgreSQL record per-statement times (`BENCH_PG_STATS=1`). */
export const PG_STATS_SETTINGS = [
  'shared_preload_libraries=pg_stat_statements',
  'pg_stat_statements.track=all',
]

/**
 * Where PostgreSQL's time goes in one phase: pg_stat_statements is reset before the phase and
 * read after it; the statements with the most execution time go to
 * `.data/bench-pgstats/<stamp>-<phase>.txt` (calls, total and mean ms, rows, WAL bytes).
 */
export class PgStats {
  private constructor(
    private readonly pool: pg.Pool,
    private readonly stamp: string,
  ) {}

  static async open(url: string, stamp: string): Promise<PgStats> {
    const pool = new pg.Pool({ connectionString: url, max: 1 })
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
    return new PgStats(pool, stamp)
  }

  async around<T>(phase: string, work: () => Promise<T>): Promise<T> {
    await this.pool.query('SELECT pg_stat_statements_reset()')
    const result = await work()
    const { rows } = await this.pool.query<Record<string, string | number>>(
      `SELECT calls, round(total_exec_time::numeric, 1) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
              rows, wal_bytes,
              round((jit_generation_time + jit_inlining_time + jit_optimization_time + jit_emission_time)::numeric, 1) AS jit_ms,
              regexp_replace(left(query, 160), '\\s+', ' ', 'g') AS query
       FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25`,
    )
    const lines = rows.map((r) =>
      [r.calls, r.total_ms, r.mean_ms, r.rows, r.wal_bytes, r.jit_ms, r.query].map(String).join('\t'),
    )
    const file = join(ensureDir(join(ROOT, '.data', 'bench-pgstats')), `${this.stamp}-${phase}.txt`)
    writeFileSync(file, `calls\ttotal_ms\tmean_ms\trows\twal_bytes\tjit_ms\tquery\n${lines.join('\n')}\n`)
    return result
  }

  close(): Promise<void> {
    return this.pool.end()
  }
}
