import { setTimeout as sleep } from 'node:timers/promises'
import type { Accepted } from './load.js'
import type { Platform } from './platform.js'

/** Statuses an email does not leave on its own. */
const FINAL = ['delivered', 'bounced', 'failed', 'rejected', 'complained', 'canceled']

export interface Settled {
  /** Accepted emails not yet in a final status, and their statuses. */
  unsettled: Map<string, string>
  /** Live events of the project that the webhook receiver has not seen. */
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
  const events = await p.sql<{ id: string }>(
    `SELECT id FROM email_events WHERE project_id = $1 AND mode = 'live' AND type <> 'email.test'`,
    [projectId],
  )
  const missingEvents = events.map((e) => e.id).filter((id) => !p.receiver.received.has(id))
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
  duplicates: number
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
  const relayed = p.relay.deliveryCounts()
  return phases.map(({ name, seconds }) => {
    const mine = accepted.filter((a) => a.phase === name)
    let delivered = 0
    let duplicates = 0
    for (const a of mine) {
      const n = relayed.get(`${a.id} ${a.to}`) ?? 0
      if (n > 0) delivered++
      duplicates += Math.max(0, n - 1)
    }
    return {
      fault: name,
      accepted: mine.length,
      delivered,
      duplicates,
      lost: mine.length - delivered,
      outcomes: counts.get(name) ?? {},
      seconds,
    }
  })
}
