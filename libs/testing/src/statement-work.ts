import type { PgPool } from '@mailer/db'

/** A node of EXPLAIN's JSON plan (the fields used here). */
interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Shared Hit Blocks': number
  'Shared Read Blocks': number
  Plans?: PlanNode[]
}

/** What one statement did, run under EXPLAIN (ANALYZE, BUFFERS) and rolled back. */
export interface StatementWork {
  /** Buffer pages it touched: the work, counted the same way on any machine (unlike time). */
  pages: number
  /** How it read `table`: `<node type> <index>` per scan of it (updates of it left out). */
  scansOf(table: string): string[]
  /** The whole plan, for an assertion's message. */
  plan: string
}

/**
 * Runs `sql` under EXPLAIN (ANALYZE, BUFFERS) in a transaction that is rolled back: how much a
 * hot statement reads, for tests showing it does not grow with a backlog.
 */
export async function statementWork(pool: PgPool, sql: string, params: unknown[]): Promise<StatementWork> {
  const c = await pool.connect()
  try {
    await c.query('BEGIN')
    const { rows } = await c.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params)
    const top: PlanNode = rows[0]['QUERY PLAN'][0].Plan
    return {
      pages: top['Shared Hit Blocks'] + top['Shared Read Blocks'],
      scansOf: (table) => scans(top, table),
      plan: JSON.stringify(rows[0]['QUERY PLAN']),
    }
  } finally {
    await c.query('ROLLBACK').catch(() => undefined)
    c.release()
  }
}

/**
 * A pool whose every query is first measured (statementWork, into `into`), then run for real
 * (`run`) or answered with no rows: for code that takes a pool and builds its SQL itself.
 */
export function measuringPool(pool: PgPool, into: StatementWork[], opts: { run: boolean }): PgPool {
  return {
    query: async (sql: string, params: unknown[] = []) => {
      into.push(await statementWork(pool, sql, params))
      return opts.run ? pool.query(sql, params) : { rows: [], rowCount: 0 }
    },
  } as unknown as PgPool
}

function scans(node: PlanNode, table: string, out: string[] = []): string[] {
  // Bitmap index scans name their index but not their table: counted by the index's name.
  const reads = node['Relation Name'] === table || node['Index Name']?.startsWith(`${table}_`)
  if (reads && node['Node Type'] !== 'ModifyTable')
    out.push(`${node['Node Type']} ${node['Index Name'] ?? ''}`.trim())
  for (const p of node.Plans ?? []) scans(p, table, out)
  return out
}
