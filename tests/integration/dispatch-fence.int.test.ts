import { createPgPool, type PgPool } from '@mailer/db'
import { waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type SpawnedService, spawnService } from '../support/processes.js'
import { useStack } from '../support/use-stack.js'

// A dispatcher that is alive but no longer holds its email's claim (another replica took it over
// while this one could not refresh it: cut off from the database, or paused) must not write the
// message's final dot, or the email arrives twice. Here the takeover is made in the database
// while the relay keeps the dispatcher waiting for its answer to RCPT TO, just before the
// dispatcher's next claim refresh; the relay answers once that refresh has run.
const PROJECT = 'proj_01KDISPATCHFENCETEST0000000'
const { te, stack, relay, seed } = useStack([], {
  relay: true,
  seed: true,
  before: () => seed.domain(PROJECT, 'mail.fence.test'),
})
const children: SpawnedService[] = []
let pool: PgPool

beforeAll(() => {
  pool = createPgPool(te.databaseUrl, { max: 2 })
})
afterAll(async () => {
  for (const c of children) await c.kill()
  await pool?.end()
})

/** The backend pid of a session that waits for a lock `blocker` holds, once there is one. */
const waiterOf = (blocker: number) =>
  waitFor(
    async () => {
      const { rows } = await pool.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))',
        [blocker],
      )
      return rows[0]?.pid ?? null
    },
    { timeoutMs: 20_000, what: "the dispatcher's claim refresh" },
  )

/** The statement session `pid` is running, or null once it is idle. */
const activeQuery = async (pid: number) =>
  (
    await pool.query<{ query: string }>(
      "SELECT query FROM pg_stat_activity WHERE pid = $1 AND state = 'active'",
      [pid],
    )
  ).rows[0]?.query ?? null

describe('the final dot is fenced by the claim', () => {
  it('a dispatcher whose claim was taken over withholds the dot: the relay never has that copy', async () => {
    const dispatcher = await spawnService(
      'dispatcher',
      stack.env({
        MAIL_TRANSPORT: 'smtp',
        SMTP_URL: relay.url,
        // The claim is refreshed every 10 s; the relay may take 15 s to answer RCPT TO.
        DISPATCH_ACK_WAIT_SECONDS: '30',
        SMTP_TIMEOUT_SECONDS: '15',
      }),
    )
    children.push(dispatcher)
    const answerRcpt = relay.holdRcpt()
    try {
      const id = await seed.email(PROJECT, {
        from: 'hi@mail.fence.test',
        to: ['fenced@example.com'],
        subject: 'Fenced',
        text: 'x',
      })
      await seed.dispatch(id, PROJECT)
      await waitFor(() => relay.rcptHeld === 1 || null, { what: 'the recipient unanswered' })

      // Another replica's takeover (a new fencing token), committed while the dispatcher's
      // refresh waits for it: the refresh then finds the claim gone.
      const other = await pool.connect()
      try {
        await other.query('BEGIN')
        const moved = await other.query(
          `UPDATE emails SET claimed_at = now(), attempts = attempts + 1 WHERE id = $1 AND status = 'sending'`,
          [id],
        )
        expect(moved.rowCount).toBe(1)
        const pid = (await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
        const refresh = await waiterOf(pid)
        await other.query('COMMIT')
        // The refresh has answered (it commits too, after ours) before the relay answers.
        await waitFor(async () => (await activeQuery(refresh)) === null, { what: 'the refresh done' })
      } finally {
        other.release()
      }
      answerRcpt()
      // The dispatcher either writes the message or ends the session without it.
      await waitFor(() => relay.forEmail(id).length > 0 || relay.openConnections === 0, {
        what: 'the dispatcher done with its session',
      })
      expect(relay.forEmail(id)).toEqual([])
      await waitFor(
        () =>
          dispatcher.logs.some(
            (l) =>
              l.emailId === id && String(l.msg).startsWith('claim may no longer be ours: email not sent'),
          ),
        { what: 'the send given up' },
      )

      // The other replica is gone in its turn without sending: its claim is given back (as a
      // stopping dispatcher does) and the email dispatched again; it is sent once.
      await seed.sql(`UPDATE emails SET status = 'queued', claimed_at = NULL WHERE id = $1`, [id])
      await seed.dispatch(id, PROJECT, 1)
      await waitFor(
        async () =>
          (await seed.sql(`SELECT status FROM emails WHERE id = $1`, [id]))[0]?.status === 'delivered',
        { timeoutMs: 15_000, what: 'the email delivered' },
      )
      expect(relay.forEmail(id)).toHaveLength(1)
    } finally {
      answerRcpt()
    }
  }, 60_000)
})
