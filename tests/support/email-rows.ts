import { waitFor } from '@mailer/testing'
import type { Seeder } from './seed.js'

/**
 * An email's row, its timeline (oldest first) and a wait for its row to pass a check, read
 * straight from the database: what the dispatcher-only tests (no email service, no API) look at.
 */
export function emailRows(seed: Seeder) {
  const emailRow = async (id: string) => (await seed.sql('SELECT * FROM emails WHERE id = $1', [id]))[0]
  const timeline = async (id: string) =>
    seed.sql<{ type: string; recipient: string | null; payload: any; created_at: Date }>(
      'SELECT type, recipient, payload, created_at FROM email_events WHERE email_id = $1 ORDER BY created_at, id',
      [id],
    )
  const until = (id: string, check: (row: any) => boolean, what: string) =>
    waitFor(
      async () => {
        const row = await emailRow(id)
        return check(row) ? row : null
      },
      { timeoutMs: 15_000, what: `${id}: ${what}` },
    )
  return { emailRow, timeline, until }
}
