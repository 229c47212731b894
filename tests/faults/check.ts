import { setTimeout as sleep } from 'node:timers/promises'
import type { Accepted } from './load.js'
import type { Platform } from './platform.js'

/** Statuses an email does not leave on its own. */
export const FINAL = ['delivered', 'bounced', 'failed', 'rejected', 'complained', 'canceled']

export interface Settled {
  /** Accepted emails not yet in a final status, and their statuses. */
  unsettled: Map<string, string>
  /** Live events of the project that a webhook subscribed to them has not received: `<id> <type> → <url>`. */
  missingEvents: string[]
}

export async function settleState(p: Platform, accepted: Accepted[], projectId: string): Promise<Settled> {
  const ids = accepted.map((a) => a.id)
  const rows = await p.sql<{ id: string; status: string }>(
    'SELECT id, status FROM emails WHERE id = ANY($1::text[])',
    [ids],
  )
  const status = new Map(rows.map((r) => [r.id, r.status]))
  const unsettled = new Map<string, string>()
  for (const id of ids) {
    const s = status.get(id) ?? '(missing)'
    if (!FINAL.includes(s)) unsettled.set(id, s)
  }
  // Every live event of the project, whichever email it belongs to and whenever it was recorded
  // (during a fault too), at every webhook whose filter takes it.
  const events = await p.sql<{ id: string; type: string }>(
    `SELECT id, type FROM email_events WHERE project_id = $1 AND mode = 'live' AND type <> 'email.test'`,
    [projectId],
  )
  const missingEvents: string[] = []
  for (const r of p.receivers)
    for (const e of events)
      if (r.wants(e.type) && !r.received.has(e.id)) missingEvents.push(`${e.id} ${e.type} → ${r.url}`)
  return { unsettled, missingEvents }
}

/**
 * Waits until every accepted email is in a final status, the relay has every one of them and the
 * receiver every event, or until `timeoutMs`; answers the last state seen. The database may still
 * be coming back, so failed reads are retried.
 */
export async function settle(
  p: Platform,
  accepted: Accepted[],
  projectId: string,
  timeoutMs: number,
): Promise<Settled> {
  const deadline = Date.now() + timeoutMs
  let last: Settled = { unsettled: new Map([['(not read yet)', '']]), missingEvents: [] }
  while (Date.now() < deadline) {
    try {
      last = await settleState(p, accepted, projectId)
      const relayed = p.relay.deliveryCounts()
      const allRelayed = accepted.every((a) => relayed.has(`${a.id} ${a.to}`))
      if (last.unsettled.size === 0 && last.missingEvents.length === 0 && allRelayed) return last
    } catch {
      /* database not back yet */
    }
    await sleep(1_000)
  }
  return last
}

export interface FaultRow {
  fault: string
  accepted: number
  delivered: number
  /** Copies beyond the first that reached an accepted email's recipient, whatever email id they carried. */
  duplicates: number
  /** Of those, copies of another email than the one the 202 named: one key accepted twice. */
  twiceAccepted: number
  lost: number
  /** Request outcomes while the fault was on and shortly after (see load.ts). */
  outcomes: Record<string, number>
  seconds: number
}

/** Per fault: its emails (first 202 during the fault), what the relay got of them, and how often. */
export function tally(
  p: Platform,
  accepted: Accepted[],
  phases: Array<{ name: string; seconds: number }>,
  counts: Map<string, Record<string, number>>,
): FaultRow[] {
  // Each client email has a recipient of its own, so every copy the relay took for that address
  // counts: a second email created under the same Idempotency-Key is a duplicate too.
  const toRecipient = new Map<string, Array<string | null>>()
  for (const d of p.relay.delivered)
    for (const to of d.envelopeTo) toRecipient.set(to, [...(toRecipient.get(to) ?? []), d.emailId])
  return phases.map(({ name, seconds }) => {
    const mine = accepted.filter((a) => a.phase === name)
    let delivered = 0
    let duplicates = 0
    let twiceAccepted = 0
    for (const a of mine) {
      const ids = toRecipient.get(a.to) ?? []
      if (ids.includes(a.id)) delivered++
      duplicates += Math.max(0, ids.length - 1)
      twiceAccepted += ids.filter((id) => id !== a.id).length
    }
    return {
      fault: name,
      accepted: mine.length,
      delivered,
      duplicates,
      twiceAccepted,
      lost: mine.length - delivered,
      outcomes: counts.get(name) ?? {},
      seconds,
    }
  })
}
