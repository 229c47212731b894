import { createDb, type Db } from '@mailer/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nextCountInMs } from '../../services/broadcast/src/domain/count-schedule.js'
import { type CountClaim, CountStore, storedCounts } from '../../services/broadcast/src/infra/count-store.js'
import { useTestDb } from '../support/test-db.js'
import { fakeId, sql } from '../support/webhooks.js'

// The stored email counts of broadcasts (broadcast_email_counts), recounted by every broadcast
// replica's refresher: two refreshers never recount one broadcast at once, and a recount that
// lost its claim (taken over after its lease, or overtaken by the sender's recount at the end of
// a send) writes nothing older over a newer count.
const t = useTestDb()
const { te } = t
let other: Db

beforeAll(() => {
  other = createDb(te.databaseUrl)
})
afterAll(() => other.$disconnect())

const schedule = { refreshMs: 60_000, recentMs: 3_600_000, maxMs: 86_400_000 }
const LEASE_MS = 60_000

/** A sent broadcast with emails in these statuses, its counts row due now and never counted. */
async function sentBroadcast(statuses: string[]): Promise<string> {
  const projectId = fakeId('proj')
  const id = fakeId('bc')
  await sql(
    te,
    `INSERT INTO broadcasts (id, project_id, audience_id, from_address, subject, html, status, updated_at,
       completed_at)
     VALUES ($1, $2, $3, 'news@example.com', 'Hi', '<p>Hi</p>', 'sent', now(), now())`,
    [id, projectId, fakeId('aud')],
  )
  for (const status of statuses) await addEmail(id, projectId, status)
  await sql(
    te,
    `INSERT INTO broadcast_email_counts (broadcast_id, due_at) VALUES ($1, now() - interval '1 second')`,
    [id],
  )
  return id
}

async function addEmail(broadcastId: string, projectId: string, status: string): Promise<void> {
  await sql(
    te,
    `INSERT INTO emails (id, project_id, mode, source, status, from_address, subject, "to", broadcast_id)
     VALUES ($1, $2, 'live', 'broadcast', $3, 'news@example.com', 'Hi', ARRAY['x@example.com'], $4)`,
    [fakeId('em'), projectId, status, broadcastId],
  )
}

/** Claims and recounts until nothing is due; answers the broadcasts this store recounted. */
async function refreshAll(store: CountStore, only: Set<string>): Promise<string[]> {
  const done: string[] = []
  for (let c = await store.claimDue(LEASE_MS); c; c = await store.claimDue(LEASE_MS)) {
    expect(await store.recount(c, nextCountInMs(c, new Date(), schedule))).toBe(true)
    if (only.has(c.id)) done.push(c.id)
  }
  return done
}

const countsOf = async (id: string) => (await storedCounts(t.db, [id])).get(id)

describe('broadcast count refreshers', () => {
  it('recount each due broadcast once between two replicas, and leave it until its next turn', async () => {
    const ids = await Promise.all(
      Array.from({ length: 12 }, (_, i) => sentBroadcast(i % 2 ? ['delivered', 'bounced'] : ['queued'])),
    )
    expect(await countsOf(ids[0]!)).toEqual({})

    const wanted = new Set(ids)
    const [a, b] = await Promise.all([
      refreshAll(new CountStore(t.db), wanted),
      refreshAll(new CountStore(other), wanted),
    ])
    expect([...a, ...b].sort()).toEqual([...ids].sort())
    for (const [i, id] of ids.entries())
      expect(await countsOf(id)).toEqual(i % 2 ? { delivered: 1, bounced: 1 } : { queued: 1 })

    // Recounted: none is due again before its next turn (a minute here, as it just finished).
    const due = await sql(
      te,
      `SELECT broadcast_id FROM broadcast_email_counts WHERE broadcast_id = ANY($1::text[])
         AND (due_at <= now() OR counted_at IS NULL)`,
      [ids],
    )
    expect(due).toEqual([])
  })

  it('drop the write of a recount whose claim was taken over, keeping the newer count', async () => {
    const id = await sentBroadcast(['queued', 'queued'])
    const [row] = await sql(te, 'SELECT project_id FROM broadcasts WHERE id = $1', [id])
    const first = new CountStore(t.db)
    const second = new CountStore(other)
    const late = await claim(first, id)

    // Its lease runs out (made to, here) and the other replica takes the broadcast over, after a
    // bounce came in, and recounts it.
    await sql(
      te,
      `UPDATE broadcast_email_counts SET due_at = now() - interval '1 second' WHERE broadcast_id = $1`,
      [id],
    )
    await addEmail(id, row.project_id, 'bounced')
    const current = await claim(second, id)
    expect(await second.recount(current, 60_000)).toBe(true)
    expect(await countsOf(id)).toEqual({ queued: 2, bounced: 1 })

    // The first replica's recount comes back late: refused, whatever it counted.
    expect(await first.recount(late, 60_000)).toBe(false)
    expect(await countsOf(id)).toEqual({ queued: 2, bounced: 1 })
  })

  it("drop a refresher's recount overtaken by the sender's at the end of a send", async () => {
    const id = await sentBroadcast(['queued'])
    const refresher = new CountStore(t.db)
    const held = await claim(refresher, id)
    const [row] = await sql(te, 'SELECT project_id FROM broadcasts WHERE id = $1', [id])
    await addEmail(id, row.project_id, 'queued')

    await new CountStore(other).recountNow(id, 60_000)
    expect(await countsOf(id)).toEqual({ queued: 2 })
    expect(await refresher.recount(held, 60_000)).toBe(false)
    // And the broadcast is not due before the sender's next turn.
    expect(await refresher.claimDue(LEASE_MS).then((c) => c?.id === id)).toBe(false)
  })
})

/** Claims due broadcasts until it gets `id` (others of this file may be due too: recounted). */
async function claim(store: CountStore, id: string): Promise<CountClaim> {
  for (let c = await store.claimDue(LEASE_MS); c; c = await store.claimDue(LEASE_MS)) {
    if (c.id === id) return c
    await store.recount(c, 60_000)
  }
  throw new Error(`broadcast ${id} was not due`)
}
