import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { useStack } from '../support/use-stack.js'

// A queued email whose dispatch message is gone (a purged or restored stream, a message an older
// pod terminated) is dispatched again: once the dispatchers have nothing left to do, and under a
// load that never lets them be idle.
const PROJECT = 'proj_01KDISPATCHRECOVERYTEST000'
// The dispatcher first: it creates the consumer the email service looks at.
// A minute's SMTP time-out: the second test holds a message at the relay for up to ~35 s.
const { stack, relay, seed } = useStack([], {
  dispatcher: { SMTP_TIMEOUT_SECONDS: '60' },
  seed: true,
  before: () => seed.domain(PROJECT, 'mail.recovery.test'),
})
beforeAll(async () => {
  await stack.start('email', { DISPATCH_RECOVERY_SECONDS: '150' })
})

const statusOf = async (id: string) =>
  (await seed.sql<{ status: string }>('SELECT status FROM emails WHERE id = $1', [id]))[0]!.status

const recovered = async () =>
  Number(
    /^mailer_email_dispatch_recovered_total (\d+)$/m.exec(
      await (await fetch(`http://127.0.0.1:${stack.metricsPort('email')}/metrics`)).text(),
    )?.[1] ?? 0,
  )

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
    // Out of the later tests' way: 150 s on (a slow run gets there) it would be recovered and counted.
    await seed.sql(`UPDATE emails SET status = 'canceled' WHERE id = $1`, [recent])
    const metrics = await (await fetch(`http://127.0.0.1:${stack.metricsPort('email')}/metrics`)).text()
    expect(metrics).toMatch(/^mailer_email_dispatch_recovered_total 1$/m)
  })

  it('under a load that keeps the dispatchers busy, a lost message is still found', async () => {
    const before = await recovered()
    const email = (to: string) =>
      seed.email(PROJECT, { from: 'hi@mail.recovery.test', to: [to], subject: 'Busy', text: 'x' })
    // The relay holds every message it is given: the busy email's dispatch message stays
    // unacknowledged, so the dispatchers are never idle while the lost one waits.
    const release = relay.pause()
    try {
      const busy = await email('busy@example.com')
      await seed.dispatch(busy, PROJECT)
      await waitFor(() => (relay.held === 1 ? true : null), { what: 'the busy email held at the relay' })
      const lost = await email('lost-busy@example.com')
      await seed.sql(`UPDATE emails SET queued_at = now() - interval '10 minutes' WHERE id = $1`, [lost])
      await waitFor(async () => ((await recovered()) === before + 1 ? true : null), {
        timeoutMs: 35_000,
        what: 'the lost email recovered while the busy one is in flight',
      })
      expect(relay.held).toBeGreaterThanOrEqual(1)
      release()
      for (const id of [busy, lost])
        await waitFor(async () => (await statusOf(id)) === 'delivered', {
          timeoutMs: 30_000,
          what: `${id} delivered`,
        })
      expect(relay.deliveryCounts().get(`${lost} lost-busy@example.com`)).toBe(1)
    } finally {
      release()
    }
  }, 90_000)

  it('a released retry whose message is gone is sent; an email queued long ago whose retry was just released is not', async () => {
    const before = await recovered()
    const email = (to: string) =>
      seed.email(PROJECT, { from: 'hi@mail.recovery.test', to: [to], subject: 'Retry', text: 'x' })
    // Deferred once; its retry was released ten minutes ago and that message is gone.
    const lostRetry = await email('lost-retry@example.com')
    await seed.sql(
      `UPDATE emails SET status = 'deferred', attempts = 1, queued_at = now() - interval '20 minutes',
         released_at = now() - interval '10 minutes' WHERE id = $1`,
      [lostRetry],
    )
    // Queued two hours ago (a platform-limit retry waits an hour), its retry released just now:
    // its message may well be on the way, and a second one under the same message id would be
    // dropped as a duplicate with every other email it carried.
    const justReleased = await email('just-released@example.com')
    await seed.sql(
      `UPDATE emails SET attempts = 1, queued_at = now() - interval '2 hours', released_at = now() WHERE id = $1`,
      [justReleased],
    )
    await waitFor(async () => (await statusOf(lostRetry)) === 'delivered', {
      timeoutMs: 40_000,
      what: 'the lost retry delivered',
    })
    expect(relay.deliveryCounts().get(`${lostRetry} lost-retry@example.com`)).toBe(1)
    expect(await recovered()).toBe(before + 1)
    expect(await statusOf(justReleased)).toBe('queued')
    // Out of the next test's way, as in the first one.
    await seed.sql(`UPDATE emails SET status = 'canceled' WHERE id = $1`, [justReleased])
  }, 60_000)

  it('an email left sending by a dispatcher lost with its message is sent; one being sent is left alone', async () => {
    const before = await recovered()
    const email = (to: string) =>
      seed.email(PROJECT, { from: 'hi@mail.recovery.test', to: [to], subject: 'Sending', text: 'x' })
    // Claimed ten minutes ago by a dispatcher that died; its message is gone too (a NATS crash
    // losing what it had acknowledged, a purged stream): nothing would ever redeliver it.
    const stranded = await email('stranded@example.com')
    await seed.sql(
      `UPDATE emails SET status = 'sending', attempts = 1, queued_at = now() - interval '11 minutes',
         claimed_at = now() - interval '10 minutes' WHERE id = $1`,
      [stranded],
    )
    // Claimed just now: its dispatcher may be delivering it.
    const inFlight = await email('in-flight@example.com')
    await seed.sql(
      `UPDATE emails SET status = 'sending', attempts = 1, queued_at = now() - interval '11 minutes',
         claimed_at = now() WHERE id = $1`,
      [inFlight],
    )
    try {
      await waitFor(async () => (await statusOf(stranded)) === 'delivered', {
        timeoutMs: 40_000,
        what: 'the stranded email delivered',
      })
      expect(relay.deliveryCounts().get(`${stranded} stranded@example.com`)).toBe(1)
      expect(await recovered()).toBe(before + 1)
      expect(await statusOf(inFlight)).toBe('sending')
      expect(relay.deliveryCounts().get(`${inFlight} in-flight@example.com`)).toBeUndefined()
    } finally {
      await seed.sql(`UPDATE emails SET status = 'canceled' WHERE id = $1`, [inFlight])
    }
  }, 60_000)
})
