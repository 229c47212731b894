import { describe, expect, it } from 'vitest'
import { useDispatcherOnly } from '../support/dispatcher-only.js'
import { emailRows } from '../support/email-rows.js'

// The dispatcher reads the suppression list again at each attempt (docs/api.md "Suppressions"):
// a retry after a short backoff (0.3 s), the breaker kept out of the way (dispatch-breaker).
const PROJECT = 'proj_01KDISPATCHSUPPRESSTEST000'
const FROM = 'hi@mail.suppress.test'

const { relay, seed, sweeper } = useDispatcherOnly(
  PROJECT,
  'mail.suppress.test',
  { SMTP_TIMEOUT_SECONDS: '2', RETRY_BASE_SECONDS: '0.3', BREAKER_MIN_CALLS: '10000' },
  { retries: true },
)

const { timeline, until } = emailRows(seed)

describe('suppression at the retry', () => {
  it('a deferred recipient whose address bounced on another email meanwhile is not tried again: rejected', async () => {
    relay.rcpt = (a) =>
      a === 'fay@example.com' ? { code: 450, message: '4.2.1 Mailbox busy, try later' } : 'accept'
    // The retry waits for the sweeper, stopped until the other email has bounced.
    sweeper.stop()
    let id = ''
    try {
      id = await seed.email(PROJECT, {
        from: FROM,
        to: ['fay@example.com', 'gus@example.com'],
        subject: 'First',
        text: 'x',
      })
      await seed.dispatch(id, PROJECT)
      await until(id, (r) => r.status === 'deferred', 'deferred')

      relay.rcpt = (a) => (a === 'fay@example.com' ? { code: 550, message: '5.1.1 No such user' } : 'accept')
      const other = await seed.email(PROJECT, {
        from: FROM,
        to: ['fay@example.com'],
        subject: 'Other',
        text: 'x',
      })
      await seed.dispatch(other, PROJECT)
      await until(other, (r) => r.status === 'bounced', 'bounced')
      expect(
        await seed.sql('SELECT reason, source_email_id FROM suppressions WHERE address = $1', [
          'fay@example.com',
        ]),
      ).toEqual([{ reason: 'hard_bounce', source_email_id: other }])
      relay.rcpt = () => 'accept'
    } finally {
      sweeper.start()
    }

    const done = await until(id, (r) => r.status === 'rejected', 'rejected')
    expect(done.attempts).toBe(2)
    expect(done.last_error).toBe('Not sent to fay@example.com: on the suppression list (hard_bounce)')
    // The relay took the first attempt for gus alone (fay was refused at RCPT TO); no retry reached it.
    expect(relay.forEmail(id).map((d) => d.envelopeTo)).toEqual([['gus@example.com']])
    expect(
      await seed.sql(
        'SELECT address, status, smtp_status FROM email_recipients WHERE email_id = $1 ORDER BY address',
        [id],
      ),
    ).toEqual([
      { address: 'fay@example.com', status: 'rejected', smtp_status: null },
      { address: 'gus@example.com', status: 'delivered', smtp_status: 250 },
    ])
    expect((await timeline(id)).map((e) => [e.type, e.recipient])).toEqual([
      ['email.sent', null],
      ['email.deferred', 'fay@example.com'],
      ['email.delivered', 'gus@example.com'],
      ['email.rejected', 'fay@example.com'],
    ])
  })
})
