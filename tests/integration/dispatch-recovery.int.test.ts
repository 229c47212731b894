import { useTestEnv, waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Seeder } from '../support/seed.js'
import { TestRelay } from '../support/smtp-relay.js'
import { Stack } from '../support/stack.js'

// A queued email whose dispatch message is gone (a purged or restored stream, a message an older
// pod terminated) is dispatched again once the dispatchers have nothing left to do.
const te = useTestEnv()
const stack = new Stack(te)
let relay: TestRelay
let seed: Seeder
const PROJECT = 'proj_01KDISPATCHRECOVERYTEST000'

beforeAll(async () => {
  relay = await TestRelay.start()
  seed = await Seeder.open(te)
  await seed.domain(PROJECT, 'mail.recovery.test')
  // The dispatcher first: it creates the consumer the email service looks at.
  await stack.start('dispatcher', { MAIL_TRANSPORT: 'smtp', SMTP_URL: relay.url })
  await stack.start('email', { DISPATCH_RECOVERY_SECONDS: '150' })
})
afterAll(async () => {
  await stack.stopAll()
  await seed.close()
  await relay.stop()
})

const statusOf = async (id: string) =>
  (await seed.sql<{ status: string }>('SELECT status FROM emails WHERE id = $1', [id]))[0]!.status

describe('lost dispatch messages', () => {
  it('an email queued long ago with no message on the way is sent once; a recent one is left alone', async () => {
    const email = (to: string) =>
      seed.email(PROJECT, { from: 'hi@mail.recovery.test', to: [to], subject: 'Lost', text: 'x' })
    const lost = await email('lost@example.com')
    const recent = await email('recent@example.com')
    // Queued 10 minutes ago; neither ever had a dispatch message.
    await seed.sql(`UPDATE emails SET queued_at = now() - interval '10 minutes' WHERE id = $1`, [lost])

    await waitFor(async () => (await statusOf(lost)) === 'delivered', {
      timeoutMs: 40_000,
      what: 'the lost email delivered',
    })
    expect(relay.deliveryCounts().get(`${lost} lost@example.com`)).toBe(1)
    // Younger than DISPATCH_RECOVERY_SECONDS: its message may still be on the way.
    expect(await statusOf(recent)).toBe('queued')
    const metrics = await (await fetch(`http://127.0.0.1:${stack.metricsPort('email')}/metrics`)).text()
    expect(metrics).toMatch(/^mailer_email_dispatch_recovered_total 1$/m)
  })
})
