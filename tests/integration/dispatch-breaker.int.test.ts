import { waitFor } from '@mailer/testing'
import { describe, expect, it } from 'vitest'
import { useDispatcherOnly } from '../support/dispatcher-only.js'

// The circuit breaker around the relay: it opens after 3 calls with more than 50 % failures, probes
// again after 1 s. Retries come back within a second and are plentiful, so emails stay deferred
// (not failed) through the outage.
const PROJECT = 'proj_01KDISPATCHBREAKERTEST0000'
const FROM = 'hi@mail.breaker.test'
const OPEN_REASON = 'relay unavailable (circuit breaker open)'

const { stack, relay, seed } = useDispatcherOnly(
  PROJECT,
  'mail.breaker.test',
  {
    SMTP_TIMEOUT_SECONDS: '2',
    RETRY_BASE_SECONDS: '0.3',
    RETRY_MAX_SECONDS: '0.6',
    MAX_RETRIES: '100',
    BREAKER_MIN_CALLS: '3',
    BREAKER_RESET_SECONDS: '1',
  },
  { retries: true },
)

const breakerOpen = async () => {
  const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort('dispatcher')}/metrics`)).text()
  return Number(/^mailer_dispatcher_relay_breaker_open (\d+)/m.exec(text)?.[1])
}
const rejectedByBreaker = async (ids: string[]) =>
  Number(
    (
      await seed.sql(
        `SELECT count(*)::int AS n FROM email_events
         WHERE email_id = ANY($1) AND type = 'email.deferred' AND payload->'data'->'delivery'->>'smtpResponse' = $2`,
        [ids, OPEN_REASON],
      )
    )[0].n,
  )

describe('relay circuit breaker', () => {
  it('opens while the relay is down, defers emails without calling it, and closes by itself when it is back', async () => {
    relay.setMode('drop')
    const ids: string[] = []
    for (let i = 0; i < 8; i++) {
      ids.push(
        await seed.email(PROJECT, {
          from: FROM,
          to: [`user${i}@example.com`],
          subject: `Outage ${i}`,
          text: 'x',
        }),
      )
    }
    for (const id of ids) await seed.dispatch(id, PROJECT)

    await waitFor(async () => (await breakerOpen()) === 1, { what: 'breaker open', timeoutMs: 15_000 })
    const connectionsAtOpen = relay.connections
    const rejectedAtOpen = await rejectedByBreaker(ids)
    // While it is open, retries keep coming and are deferred without a connection to the relay,
    // apart from one probe per second.
    await waitFor(async () => (await rejectedByBreaker(ids)) >= rejectedAtOpen + 12, {
      what: 'deferrals while open',
      timeoutMs: 15_000,
    })
    const rejectedWhileOpen = (await rejectedByBreaker(ids)) - rejectedAtOpen
    expect(relay.connections - connectionsAtOpen).toBeLessThan(rejectedWhileOpen / 2)

    const statuses = await seed.sql(`SELECT DISTINCT status FROM emails WHERE id = ANY($1)`, [ids])
    expect(statuses.every((s) => ['deferred', 'sending'].includes(s.status))).toBe(true)
    const event = (
      await seed.sql(
        `SELECT payload FROM email_events WHERE email_id = ANY($1) AND payload->'data'->'delivery'->>'smtpResponse' = $2 LIMIT 1`,
        [ids, OPEN_REASON],
      )
    )[0]
    expect(event.payload).toMatchObject({
      type: 'email.deferred',
      data: {
        delivery: { status: 'deferred', provider: 'smtp', smtpStatusCode: null, smtpResponse: OPEN_REASON },
        terminal: false,
      },
    })

    relay.setMode('up')
    await waitFor(
      async () =>
        (await seed.sql(`SELECT 1 FROM emails WHERE id = ANY($1) AND status = 'delivered'`, [ids])).length ===
        ids.length,
      { what: 'every email delivered after recovery', timeoutMs: 20_000 },
    )
    expect(await breakerOpen()).toBe(0)
    const counts = relay.deliveryCounts()
    for (const [i, id] of ids.entries()) expect(counts.get(`${id} user${i}@example.com`)).toBe(1)
    expect(await seed.sql(`SELECT 1 FROM emails WHERE id = ANY($1) AND status = 'failed'`, [ids])).toEqual([])
  })
})
