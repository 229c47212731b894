import { describe, expect, it } from 'vitest'
import { useDispatcherOnly } from '../support/dispatcher-only.js'
import { emailRows } from '../support/email-rows.js'

// A relay closing every session with a quota answer (`421 4.7.0 Daily sending quota exceeded`) is
// up and answering: its answer is the platform limit (retried an hour later, contract.md part 3),
// not an outage for the circuit breaker. Counted as breaker failures, it opened the breaker after
// BREAKER_MIN_CALLS of them, and later emails were deferred with 'relay unavailable (circuit
// breaker open)' on the short backoff, then failed after about an hour.
const PROJECT = 'proj_01KDISPATCHQUOTABREAKER000'
const FROM = 'hi@mail.quota-breaker.test'
const QUOTA = '421 4.7.0 Daily sending quota exceeded'
const MIN_CALLS = 3

const { stack, relay, seed } = useDispatcherOnly(PROJECT, 'mail.quota-breaker.test', {
  SMTP_TIMEOUT_SECONDS: '2',
  BREAKER_MIN_CALLS: String(MIN_CALLS),
  // Open long enough to be seen, had it opened.
  BREAKER_RESET_SECONDS: '120',
})
const { timeline, until } = emailRows(seed)

const breakerOpen = async () => {
  const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort('dispatcher')}/metrics`)).text()
  return Number(/^mailer_dispatcher_relay_breaker_open (\d+)/m.exec(text)?.[1])
}

describe('a relay closing sessions with a quota answer', () => {
  it('puts every email back to queued for an hour, however many: the breaker does not open', async () => {
    relay.mailFrom = () => ({ code: 421, message: '4.7.0 Daily sending quota exceeded' })
    const ids: string[] = []
    // One at a time, each after the previous one's outcome: on the old code the breaker had opened
    // by the fourth.
    for (let i = 0; i < MIN_CALLS * 2; i++) {
      const id = await seed.email(PROJECT, {
        from: FROM,
        to: [`user${i}@example.com`],
        subject: `Q${i}`,
        text: 'x',
      })
      await seed.dispatch(id, PROJECT)
      await until(id, (r) => r.attempts > 0 && r.status !== 'sending', 'first attempt recorded')
      ids.push(id)
    }

    for (const id of ids) {
      const row = await until(id, () => true, 'read')
      expect(row).toMatchObject({ status: 'queued', attempts: 1, last_error: QUOTA })
      const events = await timeline(id)
      expect(events.map((e) => e.type)).toEqual(['email.retrying'])
      expect(events[0]!.payload.data).toMatchObject({
        code: 'platform_limit',
        message: QUOTA,
        attempt: 1,
        delaySeconds: 3600,
      })
      expect(row.next_attempt_at.getTime() - events[0]!.created_at.getTime()).toBe(3_600_000)
    }
    expect(await breakerOpen()).toBe(0)
  })
})
