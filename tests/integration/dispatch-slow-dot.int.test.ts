import { describe, expect, it } from 'vitest'
import { useDispatcherOnly } from '../support/dispatcher-only.js'
import { emailRows } from '../support/email-rows.js'

// A relay with a content filter before its queue: it has the message once the final dot arrives
// and answers only after scanning it, later than any other command takes. That answer had the
// same 2 s (30 s by default) as every command: the dispatcher recorded a time-out, deferred the
// email, and each retry relayed another copy. The dot's answer has its own, longer wait.
const COMMAND_TIMEOUT_SECONDS = 2
const PROJECT = 'proj_01KDISPATCHSLOWDOTTEST00000'

const { relay, seed } = useDispatcherOnly(
  PROJECT,
  'mail.slow-dot.test',
  {
    SMTP_TIMEOUT_SECONDS: String(COMMAND_TIMEOUT_SECONDS),
    SMTP_DATA_TIMEOUT_SECONDS: '60',
    RETRY_BASE_SECONDS: '0.3',
    BREAKER_MIN_CALLS: '10000',
  },
  // Retries come back at once, so a deferral would show as a second copy quickly.
  { retries: true },
)

const { timeline, until } = emailRows(seed)

describe('a relay slow to answer the final dot', () => {
  it('is waited for past the command time-out: the email is delivered, relayed once', async () => {
    relay.commitFirst = true
    // Well past the command time-out, well within the dot's.
    relay.answerDelayMs = COMMAND_TIMEOUT_SECONDS * 2_500
    try {
      const id = await seed.email(PROJECT, {
        from: 'hi@mail.slow-dot.test',
        to: ['scan@example.com'],
        subject: 'Scanned',
        text: 'x',
      })
      await seed.dispatch(id, PROJECT)
      const row = await until(
        id,
        (r) => r.attempts > 0 && !['sending', 'queued'].includes(r.status),
        'first outcome recorded',
      )
      expect(row).toMatchObject({ status: 'delivered', attempts: 1 })
      expect((await timeline(id)).map((e) => e.type)).toEqual(['email.sent', 'email.delivered'])
      expect(relay.forEmail(id)).toHaveLength(1)
    } finally {
      relay.commitFirst = false
      relay.answerDelayMs = 0
    }
  })
})
