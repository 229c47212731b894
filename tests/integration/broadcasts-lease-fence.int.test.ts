import { createDb, type Db } from '@mailer/db'
import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SenderStore } from '../../services/broadcast/src/infra/sender-store.js'
import { fakeId, sleep, sql } from '../support/webhooks.js'

// A replica whose lease on a broadcast ran out (stalled past it) while another claimed the
// broadcast at the same cursor must not write its chunk's progress: that made the second one's
// write fail and stop, so the replica that had lost the broadcast went on with it. Its writes, and
// the renewals of its lease, are fenced by the lease it holds, not only by the cursor.
const te = useTestEnv()
let db: Db

beforeAll(() => {
  db = createDb(te.databaseUrl)
})
afterAll(async () => {
  await db.$disconnect()
})

/** A broadcast being sent (due, no lease), of a project and audience of its own. */
async function sendingBroadcast(): Promise<string> {
  const projectId = fakeId('proj')
  const audienceId = fakeId('aud')
  const id = fakeId('bc')
  await sql(te, `INSERT INTO projects (id, slug, name, updated_at) VALUES ($1, $1, 'fence', now())`, [
    projectId,
  ])
  await sql(te, `INSERT INTO audiences (id, project_id, name, updated_at) VALUES ($1, $2, 'all', now())`, [
    audienceId,
    projectId,
  ])
  await sql(
    te,
    `INSERT INTO broadcasts (id, project_id, audience_id, from_address, subject, html, status, updated_at, project_slug, mode)
     VALUES ($1, $2, $3, 'news@example.com', 'Hi', '<p>Hi</p>', 'sending', now(), $2, 'test')`,
    [id, projectId, audienceId],
  )
  return id
}

describe('a broadcast whose lease ran out and was claimed by another replica', () => {
  it("drops the first replica's progress and keeps the second one's", async () => {
    const id = await sendingBroadcast()
    const store = new SenderStore(db)
    // Replica A claims it for 1 ms and stalls; replica B claims it at the same cursor.
    const [a] = (await store.claimDue(10, 1)).filter((b) => b.id === id)
    await sleep(50)
    const [b] = (await store.claimDue(10, 60_000)).filter((x) => x.id === id)
    expect([a?.cursor, b?.cursor]).toEqual([null, null])

    // A's chunk ends first: its progress is not written; B's is.
    expect(await store.advance(a!, 'ct_a', 60_000, false)).toBe(false)
    expect(await store.advance(b!, 'ct_b', 60_000, false)).toBe(true)
    const [row] = await sql(te, 'SELECT cursor_contact_id AS cursor FROM broadcasts WHERE id = $1', [id])
    expect(row.cursor).toBe('ct_b')
  })

  it('renews only the lease of the replica that holds it, in one statement for all its broadcasts', async () => {
    const [one, two] = [await sendingBroadcast(), await sendingBroadcast()]
    const store = new SenderStore(db)
    const stale = (await store.claimDue(10, 1)).filter((b) => b.id === one)
    await sleep(50)
    const held = (await store.claimDue(10, 60_000)).filter((b) => b.id === one || b.id === two)
    expect(held.map((b) => b.id).sort()).toEqual([one, two].sort())
    const before = held.map((b) => b.lease)
    await sleep(20)

    const tokens = await store.renew([...stale, ...held], 60_000)
    expect(tokens[0]).toBeNull()
    for (const [i, t] of tokens.slice(1).entries()) expect(t! > before[i]!).toBe(true)
  })
})
