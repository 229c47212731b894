import type { FaultRow } from './check.js'
import { OUTCOMES } from './load.js'
import type { Platform } from './platform.js'

const line = (c: Array<string | number>) => `| ${c.join(' | ')} |`
const table = (head: string[], rows: Array<Array<string | number>>) =>
  [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n')

/** The issue's table, exactly its columns: per fault, its emails and what the SMTP relay got of them. */
export function renderEmails(rows: FaultRow[]): string {
  return table(
    ['fault', 'accepted', 'delivered', 'duplicates', 'lost'],
    rows.map((r) => [r.fault, r.accepted, r.delivered, r.duplicates, r.lost]),
  )
}

/** Per fault: how long it lasted, how the requests ended, and the slowest one. */
export function renderRequests(rows: FaultRow[], slowestMs: Map<string, number>): string {
  return table(
    ['fault', 's', ...OUTCOMES.map(label), 'slowest s'],
    rows.map((r) => [
      r.fault,
      r.seconds.toFixed(0),
      ...OUTCOMES.map((o) => r.outcomes[o] ?? 0),
      ((slowestMs.get(r.fault) ?? 0) / 1000).toFixed(1),
    ]),
  )
}

function label(o: string): string {
  return (
    { ok: '2xx', unavailable: '503', limited: '429', refused: 'refused', hang: 'hang', other: 'other' }[o] ??
    o
  )
}

/** The event timeline of (at most 5) emails whose recipient the relay reached twice: why it happened. */
export async function timelines(p: Platform, accepted: Array<{ id: string; to: string }>): Promise<string> {
  const copies = new Map<string, number>()
  for (const d of p.relay.delivered) for (const to of d.envelopeTo) copies.set(to, (copies.get(to) ?? 0) + 1)
  const ids = accepted.filter((a) => (copies.get(a.to) ?? 0) > 1).map((a) => a.id)
  const out: string[] = []
  for (const id of ids.slice(0, 5)) {
    const ev = await p.sql<{ type: string; at: Date }>(
      'SELECT type, created_at AS at FROM email_events WHERE email_id = $1 ORDER BY created_at',
      [id],
    )
    out.push(`  ${id}: ${ev.map((e) => `${e.at.toISOString().slice(11, 23)} ${e.type}`).join(', ')}`)
  }
  return out.join('\n')
}
