/**
 * A JSON column of a plain-pg result: pg hands `json`/`jsonb` back parsed, but a value built in
 * the statement (json_agg of a CTE) can arrive as text, depending on the path.
 */
export const jsonColumn = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T
