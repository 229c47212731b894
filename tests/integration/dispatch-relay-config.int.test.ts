import { waitFor } from '@mailer/testing'
import { describe, expect, it } from 'vitest'
import { useDispatcherOnly } from '../support/dispatcher-only.js'

// A relay that will not take mail from us at MAIL FROM — no or wrong login (`530 5.7.0
// Authentication Required`, what Gmail and Office 365 answer), TLS turned off where it is
// required, a sender the login may not use — refuses every message the same way. It is the
// deployment's configuration, not the message: the emails wait for retries (and go once the relay
// is fixed) instead of all failing for good at their first attempt.
const PROJECT = 'proj_01KDISPATCHRELAYCONFIG00000'
const FROM = 'hi@mail.relay-config.test'

const { relay, seed } = useDispatcherOnly(
  PROJECT,
  'mail.relay-config.test',
  {
    SMTP_TIMEOUT_SECONDS: '2',
    RETRY_BASE_SECONDS: '0.3',
    MAX_RETRIES: '3',
    BREAKER_MIN_CALLS: '10000',
  },
  { retries: true },
)

describe('a relay refusing our sender at MAIL FROM', () => {
  it('defers every recipient (530, or a sender refusal) and delivers once the relay takes mail again', async () => {
    const answers = [
      { code: 530, message: '5.7.0 Authentication Required' },
      { code: 553, message: `5.7.1 <${FROM}>: Sender address rejected: not owned by user relay-user` },
    ]
    relay.mailFrom = () => answers.shift() ?? 'accept'
    try {
      const id = await seed.email(PROJECT, {
        from: FROM,
        to: ['ann@example.com', 'bob@example.com'],
        subject: 'Config',
        text: 'x',
      })
      await seed.dispatch(id, PROJECT)
      const row = await waitFor(
        async () => {
          const [r] = await seed.sql('SELECT status, attempts, failed_at FROM emails WHERE id = $1', [id])
          return r?.status === 'delivered' || r?.status === 'failed' ? r : null
        },
        { timeoutMs: 15_000, what: 'the email final' },
      )
      expect(row).toMatchObject({ status: 'delivered', attempts: 3, failed_at: null })
      const events = await seed.sql<{ type: string; recipient: string | null; payload: any }>(
        'SELECT type, recipient, payload FROM email_events WHERE email_id = $1 ORDER BY created_at, id',
        [id],
      )
      expect(events.map((e) => [e.type, e.recipient])).toEqual([
        ['email.deferred', 'ann@example.com'],
        ['email.deferred', 'bob@example.com'],
        ['email.deferred', 'ann@example.com'],
        ['email.deferred', 'bob@example.com'],
        ['email.sent', null],
        ['email.delivered', 'ann@example.com'],
        ['email.delivered', 'bob@example.com'],
      ])
      expect(events.slice(0, 4).map((e) => e.payload.data.delivery.smtpStatusCode)).toEqual([
        530, 530, 553, 553,
      ])
      expect(await seed.sql(`SELECT address FROM suppressions WHERE address LIKE '%@example.com'`)).toEqual(
        [],
      )
      expect(relay.forEmail(id)).toHaveLength(1)
    } finally {
      relay.mailFrom = () => 'accept'
    }
  })
})
