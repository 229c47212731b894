import { describe, expect, it } from 'vitest'
import { cancelBroadcast } from '../../services/broadcast/src/infra/broadcast-store.js'
import { SenderStore } from '../../services/broadcast/src/infra/sender-store.js'
import { useTestDb } from '../support/test-db.js'
import { fakeId, sql } from '../support/webhooks.js'

// A cancel reaches the replica sending the broadcast only at its next lease renewal (a third of a
// lease later), and a chunk starting meanwhile read its contacts and sent them: up to a chunk of
// emails went out after the cancel had answered. The contact read of each chunk is fenced on the
// broadcast still being `sending`, so the chunk after a cancel reads no one and the step ends lost.
const t = useTestDb()
const { te } = t

/** A broadcast being sent (due, no lease) to an audience of three contacts, of a project of its own. */
async function sendingBroadcast(): Promise<{ id: string; projectId: string }> {
  const projectId = fakeId('proj')
  const audienceId = fakeId('aud')
  const id = fakeId('bc')
  await sql(te, `INSERT INTO projects (id, slug, name, updated_at) VALUES ($1, $1, 'cancel', now())`, [
    projectId,
  ])
  await sql(te, `INSERT INTO audiences (id, project_id, name, updated_at) VALUES ($1, $2, 'all', now())`, [
    audienceId,
    projectId,
  ])
  for (const n of ['a', 'b', 'c']) {
    const contactId = fakeId('ct')
    await sql(te, `INSERT INTO contacts (id, project_id, email, updated_at) VALUES ($1, $2, $3, now())`, [
      contactId,
      projectId,
      `${n}@example.com`,
    ])
    await sql(te, 'INSERT INTO audience_members (audience_id, contact_id) VALUES ($1, $2)', [
      audienceId,
      contactId,
    ])
  }
  await sql(
    te,
    `INSERT INTO broadcasts (id, project_id, audience_id, from_address, subject, html, status, updated_at, project_slug, mode)
     VALUES ($1, $2, $3, 'news@example.com', 'Hi', '<p>Hi</p>', 'sending', now(), $2, 'test')`,
    [id, projectId, audienceId],
  )
  return { id, projectId }
}

describe('a broadcast canceled while a replica holds it', () => {
  it('reads no contacts for the next chunk, and its progress is not written', async () => {
    const { id, projectId } = await sendingBroadcast()
    const store = new SenderStore(t.db)
    const [b] = (await store.claimDue(10, 60_000)).filter((x) => x.id === id)
    // Its first chunk of two is read and done.
    const first = await store.nextContacts(b!, 2)
    expect(first).toHaveLength(2)
    expect(await store.advance(b!, first[1]!.id, 60_000, false)).toBe(true)
    b!.cursor = first[1]!.id

    // The cancel commits while the replica still holds its lease (no renewal has seen it yet).
    expect((await cancelBroadcast(t.db, projectId, id)).status).toBe('canceled')

    // The next chunk reads no one, so nothing is sent, and the step's write finds it lost.
    expect(await store.nextContacts(b!, 2)).toEqual([])
    expect(await store.advance(b!, b!.cursor, 60_000, true)).toBe(false)
    const [row] = await sql(te, 'SELECT status FROM broadcasts WHERE id = $1', [id])
    expect(row.status).toBe('canceled')
  })
})
