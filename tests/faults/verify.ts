import { setTimeout as sleep } from 'node:timers/promises'
import { FINAL } from './check.js'
import type { Accepted } from './load.js'
import type { FaultReceiver } from './receiver.js'

/** What the API says of the accepted emails once the run has settled, against what the webhooks got. */
export interface ApiVerdict {
  /** Emails per status, as `GET /v1/emails/:id` answers it. */
  statuses: Record<string, number>
  /** Emails the API does not show in a final status (or does not show at all): `<id> <status>`. */
  notFinal: string[]
  /** Delivered emails whose timeline lacks `email.queued`, `email.sent` or `email.delivered`. */
  missingTimeline: string[]
  /** Timeline events that a webhook subscribed to them never received: `<event> <type> of <email> → <url>`. */
  missingAtWebhook: string[]
  /** Events a webhook got with another type or email than the timeline's, or outside its filter. */
  wrongAtWebhook: string[]
}

interface EmailRecord {
  id: string
  status: string
  events: Array<{ id: string; type: string }>
}

/** Every status a delivered email's timeline must show (contract.md parts 3 and 4). */
const DELIVERED_TIMELINE = ['email.queued', 'email.sent', 'email.delivered']

/**
 * Reads every accepted email through the API as its sender would (`GET /v1/emails/:id`), and
 * checks its status is final and each event of its timeline, faults' included, reached every
 * webhook whose filter takes it, as that event of that email.
 */
export async function verifyViaApi(
  gatewayUrl: string,
  key: string,
  accepted: Accepted[],
  receivers: FaultReceiver[],
): Promise<ApiVerdict> {
  const v: ApiVerdict = {
    statuses: {},
    notFinal: [],
    missingTimeline: [],
    missingAtWebhook: [],
    wrongAtWebhook: [],
  }
  const queue = [...accepted]
  const worker = async () => {
    for (let a = queue.pop(); a; a = queue.pop()) {
      const email = await getEmail(gatewayUrl, key, a.id)
      if (typeof email === 'string') {
        v.notFinal.push(`${a.id} ${email}`)
        continue
      }
      v.statuses[email.status] = (v.statuses[email.status] ?? 0) + 1
      if (!FINAL.includes(email.status)) v.notFinal.push(`${a.id} ${email.status}`)
      const types = new Set(email.events.map((e) => e.type))
      if (email.status === 'delivered' && !DELIVERED_TIMELINE.every((t) => types.has(t)))
        v.missingTimeline.push(`${a.id}: ${[...types].join(', ')}`)
      for (const e of email.events) {
        if (e.type === 'email.test') continue
        for (const r of receivers) {
          if (!r.wants(e.type)) continue
          const got = r.received.get(e.id)
          if (!got) v.missingAtWebhook.push(`${e.id} ${e.type} of ${a.id} → ${r.url}`)
          else if (got.type !== e.type || got.emailId !== a.id)
            v.wrongAtWebhook.push(`${e.id} came as ${got.type} of ${got.emailId}, is ${e.type} of ${a.id}`)
        }
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  for (const r of receivers)
    for (const [id, got] of r.received)
      if (!r.wants(got.type))
        v.wrongAtWebhook.push(`${id} ${got.type} reached ${r.url}, not subscribed to it`)
  return v
}

/** The email record, or why it could not be read (a 503 is retried: the platform may still be settling). */
async function getEmail(gatewayUrl: string, key: string, id: string): Promise<EmailRecord | string> {
  for (let attempt = 1; ; attempt++) {
    let res: Response
    try {
      res = await fetch(`${gatewayUrl}/v1/emails/${id}`, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(10_000),
      })
    } catch (err) {
      return `(GET failed: ${String(err)})`
    }
    if (res.status === 200) return (await res.json()) as EmailRecord
    const body = await res.text()
    if (res.status !== 503 || attempt === 5) return `(GET answered ${res.status} ${body.slice(0, 120)})`
    await sleep(500)
  }
}
