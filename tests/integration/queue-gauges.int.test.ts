import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'
import { metricValue } from '../support/webhooks.js'

// The send-queue gauges MailerSendQueueStalled reads. No dispatcher runs here, so accepted emails
// stay queued; retries and ages are made by changing rows.
const { te, stack, client } = useStack(['auth', 'email', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme', 'queue.acme.test')
})

const send = async (to: string) => {
  const r = await client.post('/v1/emails', acme.live, email(acme.from, { to }))
  expect(r.status).toBe(202)
  return r.body.id as string
}
const gauge = (name: string) => metricValue(stack.metricsPort('email'), `mailer_email_${name}`)
/** The gauges as refreshed after `depth` emails wait (the loop runs every 10 s). */
const gaugesAt = (depth: number) =>
  waitFor(async () => ((await gauge('queue_depth')) === depth ? gauge('queue_oldest_seconds') : null), {
    what: `queue_depth ${depth}`,
    timeoutMs: 25_000,
  })

describe('send queue gauges', () => {
  it('age the oldest email from when it became due, not while it waits for a retry time ahead', async () => {
    // Queued an hour ago, deferred by the relay, next try in half an hour: not the dispatcher's delay.
    const retrying = await send('greylisted@example.com')
    await sql(
      te,
      `UPDATE emails SET status = 'deferred', queued_at = now() - interval '1 hour',
         next_attempt_at = now() + interval '30 minutes' WHERE id = $1`,
      [retrying],
    )
    await send('fresh@example.com')
    expect(await gaugesAt(2)).toBeLessThan(600)

    // Due for two hours and never handed out: a stalled dispatcher shows.
    const stuck = await send('stuck@example.com')
    await sql(te, `UPDATE emails SET queued_at = now() - interval '2 hours' WHERE id = $1`, [stuck])
    await send('another@example.com')
    expect(await gaugesAt(4)).toBeGreaterThanOrEqual(7200)
  }, 60_000)
})
