import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { useStack } from '../support/use-stack.js'

// A claim older than the ack wait is taken over (its dispatcher is presumed dead). A live
// dispatcher whose sends queue behind a slow relay for longer than that must keep its claims, or
// duplicate dispatch messages would send the same email twice.
const PROJECT = 'proj_01KDISPATCHCLAIMSTEST00000'
const { stack, relay, seed } = useStack([], {
  relay: true,
  seed: true,
  before: () => seed.domain(PROJECT, 'mail.claims.test'),
})

beforeAll(async () => {
  await stack.start('dispatcher', dispatcherEnv())
})

const dispatcherEnv = (over: Record<string, string> = {}) => ({
  MAIL_TRANSPORT: 'smtp',
  SMTP_URL: relay.url,
  // One connection, a relay that takes 1 s per message: the sixth email waits about 5 s for
  // its turn, longer than the 3 s ack wait.
  SMTP_POOL_SIZE: '1',
  DISPATCH_CONCURRENCY: '8',
  DISPATCH_ACK_WAIT_SECONDS: '3',
  // Far above the relay's 1 s answers: with 1.5 s, half a second of a busy event loop (the relay
  // runs in this process) turned an answer into a time-out, a deferral and a second attempt.
  SMTP_TIMEOUT_SECONDS: '10',
  ...over,
})

describe('claims', () => {
  it('a send waiting behind a slow relay keeps its claim: duplicate messages send nothing twice', async () => {
    relay.answerDelayMs = 1_000
    const ids: string[] = []
    for (let i = 0; i < 6; i++) {
      ids.push(
        await seed.email(PROJECT, {
          from: 'q@mail.claims.test',
          to: [`q${i}@example.com`],
          subject: `Slow ${i}`,
          text: 'x',
        }),
      )
    }
    for (const id of ids) await seed.dispatch(id, PROJECT, 0)
    // Duplicates (as a re-publish or a redelivery would make) while the first copies are in flight.
    await waitFor(
      async () =>
        (await seed.sql(`SELECT 1 FROM emails WHERE id = ANY($1) AND status = 'sending'`, [ids])).length ===
        6,
      {
        what: 'all claimed',
      },
    )
    for (const id of ids) await seed.dispatch(id, PROJECT, 1)

    await waitFor(
      async () =>
        (await seed.sql(`SELECT 1 FROM emails WHERE id = ANY($1) AND status = 'delivered'`, [ids])).length ===
        6,
      { timeoutMs: 30_000, what: 'all delivered' },
    )
    await waitFor(() => seed.dispatchDrained(), { timeoutMs: 15_000, what: 'every dispatch message handled' })
    relay.answerDelayMs = 0

    const counts = relay.deliveryCounts()
    expect(ids.map((id, i) => counts.get(`${id} q${i}@example.com`))).toEqual([1, 1, 1, 1, 1, 1])
    expect(
      (await seed.sql(`SELECT DISTINCT attempts FROM emails WHERE id = ANY($1)`, [ids])).map(
        (r) => r.attempts,
      ),
    ).toEqual([1])
    const metrics = await (await fetch(`http://127.0.0.1:${stack.metricsPort('dispatcher')}/metrics`)).text()
    // The duplicates found their email busy, and later done.
    expect(metrics).toMatch(/^mailer_dispatcher_dispatch_skipped_total\{reason="busy"\} [1-9]/m)
    expect(metrics).toMatch(/^mailer_dispatcher_dispatch_skipped_total\{reason="not_claimable"\} 6$/m)
  })

  it('many emails dispatched at once, each twice in the same instant, are each sent exactly once', async () => {
    // Claims and outcomes of concurrent dispatches are written together (group commit): a
    // duplicate in the same combined claim must not get the email a second time.
    const ids: string[] = []
    for (let i = 0; i < 12; i++)
      ids.push(
        await seed.email(PROJECT, {
          from: 'burst@mail.claims.test',
          to: [`b${i}@example.com`],
          subject: `Burst ${i}`,
          text: 'x',
        }),
      )
    await Promise.all(ids.flatMap((id) => [seed.dispatch(id, PROJECT, 0), seed.dispatch(id, PROJECT, 1)]))
    await waitFor(
      async () =>
        (await seed.sql(`SELECT 1 FROM emails WHERE id = ANY($1) AND status = 'delivered'`, [ids])).length ===
        12,
      { timeoutMs: 30_000, what: 'all delivered' },
    )
    await waitFor(() => seed.dispatchDrained(), { timeoutMs: 15_000, what: 'every dispatch message handled' })
    const counts = relay.deliveryCounts()
    expect(ids.map((id, i) => counts.get(`${id} b${i}@example.com`))).toEqual(ids.map(() => 1))
    const events = await seed.sql(
      `SELECT type, count(*)::int AS n FROM email_events WHERE email_id = ANY($1) GROUP BY type ORDER BY type`,
      [ids],
    )
    expect(events).toEqual([
      { type: 'email.delivered', n: 12 },
      { type: 'email.sent', n: 12 },
    ])
  })

  it('a group message: each email sent once, unknown and repeated ids skipped, the message acked', async () => {
    const ids: string[] = []
    for (let i = 0; i < 5; i++)
      ids.push(
        await seed.email(PROJECT, {
          from: 'group@mail.claims.test',
          to: [`g${i}@example.com`],
          subject: `Group ${i}`,
          text: 'x',
        }),
      )
    await seed.dispatchGroup([...ids, ids[0]!, 'email_01KUNKNOWNUNKNOWNUNKNOWN00'], `${ids[0]}:0`)
    // The same emails again in another group (a re-sweep), while the first is in flight.
    await seed.dispatchGroup([ids[3]!, ids[4]!], `${ids[3]}:0`)
    await waitFor(
      async () =>
        (await seed.sql(`SELECT 1 FROM emails WHERE id = ANY($1) AND status = 'delivered'`, [ids])).length ===
        5,
      { timeoutMs: 30_000, what: 'all delivered' },
    )
    await waitFor(() => seed.dispatchDrained(), { timeoutMs: 15_000, what: 'every dispatch message handled' })
    const counts = relay.deliveryCounts()
    expect(ids.map((id, i) => counts.get(`${id} g${i}@example.com`))).toEqual([1, 1, 1, 1, 1])
    const metrics = await (await fetch(`http://127.0.0.1:${stack.metricsPort('dispatcher')}/metrics`)).text()
    expect(metrics).toMatch(/^mailer_dispatcher_dispatch_skipped_total\{reason="unknown_email"\} [1-9]/m)
  })

  it('an email taken over after its last allowed attempt is failed, not sent once more', async () => {
    // Nine attempts made, none recorded (each dispatcher died, or its outcome could not be
    // written), and the claim of the last one is stale.
    const id = await seed.email(PROJECT, {
      from: 'late@mail.claims.test',
      to: ['tenth@example.com'],
      subject: 'Tenth time',
      text: 'x',
    })
    await seed.sql(
      `UPDATE emails SET status = 'sending', attempts = 9, claimed_at = now() - interval '1 minute' WHERE id = $1`,
      [id],
    )
    await seed.dispatch(id, PROJECT, 9)
    const row = await waitFor(
      async () => (await seed.sql(`SELECT * FROM emails WHERE id = $1 AND status = 'failed'`, [id]))[0],
      { what: 'email failed' },
    )
    expect(row).toMatchObject({ attempts: 10, last_error: expect.stringMatching(/^No attempt left/) })
    const events = await seed.sql(`SELECT type, payload FROM email_events WHERE email_id = $1`, [id])
    expect(events.map((e: any) => [e.type, e.payload.data.code])).toEqual([
      ['email.failed', 'retries_exhausted'],
    ])
    expect(relay.deliveryCounts().get(`${id} tenth@example.com`)).toBeUndefined()
    // Never attempted, yet not left queued behind an email that will never move on.
    const recipients = await seed.sql(`SELECT address, status FROM email_recipients WHERE email_id = $1`, [
      id,
    ])
    expect(recipients).toEqual([{ address: 'tenth@example.com', status: 'failed' }])
  })

  it('a dispatcher stopping mid-group finishes what it started and leaves the rest to the next one', async () => {
    // One email at a time; the first one's answer is held, so it is under way (past its final dot)
    // when the stop comes, however slow the machine: a relay taking 1 s per message, and a stop
    // bounded by 4 s, left a loaded machine little room.
    await stack.stop('dispatcher')
    await stack.start('dispatcher', dispatcherEnv({ DISPATCH_CONCURRENCY: '1' }))
    relay.answerDelayMs = 0
    const release = relay.pause()
    const ids: string[] = []
    for (let i = 0; i < 6; i++)
      ids.push(
        await seed.email(PROJECT, {
          from: 'stop@mail.claims.test',
          to: [`s${i}@example.com`],
          subject: `Stop ${i}`,
          text: 'x',
        }),
      )
    const delivered = async () =>
      (await seed.sql(`SELECT id FROM emails WHERE id = ANY($1) AND status = 'delivered'`, [ids])).map(
        (r: any) => r.id as string,
      )
    let stopping = 0
    try {
      await seed.dispatchGroup(ids, `${ids[0]}:0`)
      await waitFor(() => relay.held === 1 || null, { what: 'the first email at the relay, unanswered' })
      stopping = Date.now()
      const stopped = stack.stop('dispatcher')
      // The stop reaches the dispatcher within this turn (its first step once the responders are
      // stopped: nothing to wait for): the answer comes after it, and no slot is given again.
      await new Promise((r) => setImmediate(r))
      release()
      await stopped
    } finally {
      release()
    }
    // A stop that waited out its drain (20 s with the 10 s SMTP time-out) would take over twice
    // this; one that sent the rest of the group first is caught below.
    expect(Date.now() - stopping).toBeLessThan(8_000)
    // The send under way finished and was recorded; the emails waiting for a slot were not started.
    const first = relay.delivered.filter((d) => ids.includes(d.emailId!)).map((d) => d.emailId)
    expect(first).toHaveLength(1)
    expect(await delivered()).toEqual(first)
    expect(
      await seed.sql(`SELECT 1 FROM emails WHERE id = ANY($1) AND status = 'queued' AND attempts = 0`, [ids]),
    ).toHaveLength(5)
    await stack.start('dispatcher', dispatcherEnv())
    await waitFor(async () => (await delivered()).length === 6, {
      timeoutMs: 30_000,
      what: 'all delivered after the restart',
    })
    const counts = relay.deliveryCounts()
    expect(ids.map((id, i) => counts.get(`${id} s${i}@example.com`))).toEqual([1, 1, 1, 1, 1, 1])
  })
})
