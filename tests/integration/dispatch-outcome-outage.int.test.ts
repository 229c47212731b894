import { createPgPool, type PgPool } from '@mailer/db'
import { waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { type SpawnedService, spawnService } from '../support/processes.js'
import { useStack } from '../support/use-stack.js'

// Once the relay accepted a message, its outcome must be written, however long the database
// keeps failing the write while the claim is still the dispatcher's: a dispatcher that gave up
// after its first few retries (about 8 s) let its claim go stale, and the email was sent again
// when its message came back. Here the email's row is locked from the test once the relay has the
// message, so the outcome's write and the claim's refreshes fail (DATABASE_QUERY_TIMEOUT_MS of
// 1 s) for longer than those retries, but less than the ack wait (30 s); then the lock goes.
const { te, client, stack, relay } = useStack(['auth', 'email', 'gateway'], { relay: true })
const children: SpawnedService[] = []
let pool: PgPool
let live: string
let from: string

beforeAll(async () => {
  pool = createPgPool(te.databaseUrl, { max: 2 })
  const p = await projectWithDomain(client, 'outcome-outage', 'mail.outcome-outage.test')
  live = p.live
  from = p.from
})
afterAll(async () => {
  for (const c of children) await c.kill()
  await pool?.end()
})

const RETRYING = 'could not record the delivery outcome; retrying'

describe('an outcome that cannot be written for longer than the first retries', () => {
  it('is written once the database answers again, and the email is delivered once', async () => {
    const dispatcher = await spawnService(
      'dispatcher',
      stack.env({ MAIL_TRANSPORT: 'smtp', SMTP_URL: relay.url, DATABASE_QUERY_TIMEOUT_MS: '1000' }),
    )
    children.push(dispatcher)
    const answer = relay.pause()
    const locker = await pool.connect()
    try {
      const sent = await client.post('/v1/emails', live, {
        from,
        to: 'outage@example.com',
        subject: 'Recorded once',
        text: 'x',
      })
      expect(sent.status).toBe(202)
      const id = sent.body.id as string
      await waitFor(() => relay.held === 1 || null, { what: 'the message at the relay, unanswered' })

      // The row locked, then the relay accepts: every write of the outcome (and every claim
      // refresh) waits for the lock until its statement times out.
      await locker.query('BEGIN')
      await locker.query('SELECT id FROM emails WHERE id = $1 FOR UPDATE', [id])
      answer()
      const failures = () =>
        dispatcher.logs.filter((l) => l.emailId === id && l.msg === RETRYING).length +
        dispatcher.logs.filter((l) => String(l.msg).startsWith('message handler failed')).length
      // Six failed writes: past the ~8 s of retries after which the dispatcher used to give up.
      await waitFor(() => failures() >= 6 || null, {
        timeoutMs: 25_000,
        what: 'the outcome failing past the first retries',
      })
      await locker.query('COMMIT')

      const record = await waitFor(
        async () => {
          const r = await client.get(`/v1/emails/${id}`, live)
          return r.body.status === 'delivered' ? r.body : null
        },
        { timeoutMs: 45_000, what: 'the email delivered' },
      )
      // One attempt, one copy: the email was never taken over and sent again.
      expect(relay.forEmail(id)).toHaveLength(1)
      expect(record.attempts).toBe(1)
    } finally {
      answer()
      await locker.query('ROLLBACK').catch(() => undefined)
      locker.release()
    }
  }, 90_000)
})
