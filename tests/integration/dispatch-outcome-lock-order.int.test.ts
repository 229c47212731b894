import { newId } from '@mailer/contracts'
import { createPgPool, type PgPool } from '@mailer/db'
import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ClaimedEmail } from '../../services/dispatcher/src/domain/claimed-email.js'
import type { Plan } from '../../services/dispatcher/src/domain/outcome.js'
import { recordOutcomes } from '../../services/dispatcher/src/infra/record.js'
import { waitersOn } from '../support/db.js'

/*
 * The dispatcher's outcome write and the tracking consumer's group write (which locks its emails
 * in id order: services/email/src/infra/tracking-store.ts) against the real PostgreSQL, when both
 * take the same two emails at once.
 */
const te = useTestEnv()
let pool: PgPool
const projectId = newId('project')
const claimedAt = new Date(Date.now() - 1_000)

beforeAll(async () => {
  pool = createPgPool(te.databaseUrl, { max: 4 })
})
afterAll(async () => {
  await pool?.end()
})

/** An email being sent (status `sending`, claimed at `claimedAt`) with one recipient. */
async function sendingEmail(id: string): Promise<void> {
  await pool.query(
    `INSERT INTO emails (id, project_id, mode, source, status, from_address, reply_to, "to", cc, bcc, subject, claimed_at, attempts)
     VALUES ($1, $2, 'live', 'api', 'sending', 'a@locks.test', '{}', '{reader@example.com}', '{}', '{}', 'Hi', $3, 1)`,
    [id, projectId, claimedAt],
  )
  await pool.query(
    `INSERT INTO email_recipients (email_id, address, kind) VALUES ($1, 'reader@example.com', 'to')`,
    [id],
  )
}

const delivered = (id: string) => {
  const at = new Date()
  const email = {
    id,
    projectId,
    mode: 'live',
    from: 'a@locks.test',
    subject: 'Hi',
    tags: {},
    claimedAt,
  } as unknown as ClaimedEmail
  const plan: Plan = {
    at,
    status: 'delivered',
    nextAttemptAt: null,
    sent: true,
    failed: false,
    lastError: null,
    recipients: [
      {
        address: 'reader@example.com',
        status: 'delivered',
        smtpStatus: 250,
        smtpResponse: '250 OK',
        deliveryMs: 5,
        bounceType: null,
      },
    ],
    events: [{ type: 'email.delivered', recipient: 'reader@example.com' }],
    suppress: [],
    outcomes: ['delivered'],
  }
  return { email, plan, messageId: `<${id}@locks.test>` }
}

describe('the outcome write of two emails', () => {
  it('locks them in id order: an open holding the first never deadlocks with it, and both complete', async () => {
    const first = newId('email')
    const second = newId('email')
    expect(first < second).toBe(true)
    // The second one first on disk too, so no plan of the old statement reached the first one first.
    await sendingEmail(second)
    await sendingEmail(first)

    // The tracking write's order (ORDER BY id): it holds the first email and will want the second.
    const tracking = await pool.connect()
    try {
      await tracking.query('BEGIN')
      await tracking.query(`SELECT id FROM emails WHERE id = $1 FOR NO KEY UPDATE`, [first])
      const pid = (await tracking.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid

      // The dispatcher records the two outcomes, the second email's first.
      const writing = recordOutcomes(pool, [delivered(second), delivered(first)]).then(
        (r) => ({ ok: r }),
        (err: unknown) => ({ err }),
      )
      // Until it waits for the first email's lock: a wait of the tracking session's, not any
      // session's (another test file's outcome write waiting let this one go on too early).
      for (let i = 0; ; i++) {
        if ((await waitersOn(pool, pid)) > 0) break
        if (i > 200) throw new Error('the outcome write never waited for the lock')
        await new Promise((r) => setTimeout(r, 25))
      }

      // The tracking write takes the second email now. Before the fix the outcome write held it
      // already: PostgreSQL found the deadlock after deadlock_timeout and failed one of the two.
      const tookSecond = await tracking
        .query(`SELECT id FROM emails WHERE id = $1 FOR NO KEY UPDATE`, [second])
        .then(
          () => 'locked',
          (err: Error) => err.message,
        )
      expect(tookSecond).toBe('locked')
      await tracking.query('COMMIT')

      // Both outcomes written (null would mean the claim was lost), none failed.
      expect(await writing).toEqual({ ok: [expect.any(Array), expect.any(Array)] })
    } finally {
      tracking.release()
    }
    const { rows } = await pool.query(
      `SELECT id, status FROM emails WHERE id = ANY($1::text[]) ORDER BY id`,
      [[first, second]],
    )
    expect(rows).toEqual([
      { id: first, status: 'delivered' },
      { id: second, status: 'delivered' },
    ])
  })
})
