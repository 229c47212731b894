import { describe, expect, it } from 'vitest'
import { useDispatcherOnly } from '../support/dispatcher-only.js'
import { emailRows } from '../support/email-rows.js'

// A Postfix-style relay ends a session that has had too many refused recipients with `421 4.7.0
// … Error: too many errors` (smtpd_hard_error_limit): the recipients it had refused before are
// answered for good, the one that got the 421 and those after it are not. The 421 used to throw
// those answers away, so every attempt ended the same way: the good recipients were never
// delivered, the bad ones never bounced or suppressed, and all failed once the retries ran out.
const TOO_MANY_ERRORS = { code: 421, message: '4.7.0 relay.test Error: too many errors' }
const UNKNOWN = { code: 550, message: '5.1.1 <bad@example.com>: Recipient address rejected: User unknown' }
const PROJECT = 'proj_01KDISPATCHRCPT421TEST00000'

const { relay, seed } = useDispatcherOnly(
  PROJECT,
  'mail.rcpt421.test',
  {
    SMTP_TIMEOUT_SECONDS: '2',
    RETRY_BASE_SECONDS: '0.3',
    MAX_RETRIES: '3',
    BREAKER_MIN_CALLS: '10000',
  },
  { retries: true },
)

const { timeline, until } = emailRows(seed)

describe('a relay closing the session after refusing recipients', () => {
  it('bounces and suppresses the refused recipient, and delivers the others on the retry', async () => {
    // Refuses bad@; once a session has had a refusal, the next recipient gets the 421 and the
    // session ends (smtp-server closes it after a 421).
    const refused = new Set<string>()
    relay.rcpt = (address, session) => {
      if (address === 'bad@example.com') {
        refused.add(session.id)
        return UNKNOWN
      }
      return refused.has(session.id) ? TOO_MANY_ERRORS : 'accept'
    }
    try {
      const id = await seed.email(PROJECT, {
        from: 'hi@mail.rcpt421.test',
        // In this order on the wire (the envelope goes by address): the refusal comes second.
        to: ['ann@example.com', 'bad@example.com', 'carl@example.com'],
        subject: 'Partly refused',
        text: 'x',
      })
      await seed.dispatch(id, PROJECT)
      const row = await until(
        id,
        (r) => !['queued', 'sending', 'deferred'].includes(r.status),
        'every recipient final',
      )

      const recipients = await seed.sql(
        'SELECT address, status, smtp_status, bounce_type FROM email_recipients WHERE email_id = $1 ORDER BY address',
        [id],
      )
      expect(recipients.map((r) => [r.address, r.status, r.smtp_status, r.bounce_type])).toEqual([
        ['ann@example.com', 'delivered', 250, null],
        ['bad@example.com', 'bounced', 550, 'hard'],
        ['carl@example.com', 'delivered', 250, null],
      ])
      // Bounced on the first attempt, the others delivered on the second, to them alone.
      expect(row).toMatchObject({ status: 'bounced', attempts: 2 })
      expect(relay.forEmail(id).map((d) => d.envelopeTo)).toEqual([['ann@example.com', 'carl@example.com']])
      const events = await timeline(id)
      const first = events.slice(0, 3).sort((a, b) => a.recipient!.localeCompare(b.recipient!))
      expect(first.map((e) => [e.type, e.recipient])).toEqual([
        ['email.deferred', 'ann@example.com'],
        ['email.bounced', 'bad@example.com'],
        ['email.deferred', 'carl@example.com'],
      ])
      expect(events.slice(3).map((e) => [e.type, e.recipient])).toEqual([
        ['email.sent', null],
        ['email.delivered', 'ann@example.com'],
        ['email.delivered', 'carl@example.com'],
      ])
      expect(first[1]!.payload.data).toMatchObject({
        bounce: { type: 'hard', reason: `550 ${UNKNOWN.message}` },
        delivery: { status: 'bounced', smtpStatusCode: 550 },
      })
      // Those the relay had not answered for good waited, with its words.
      for (const deferred of [first[0]!, first[2]!])
        expect(deferred.payload.data.delivery).toMatchObject({
          status: 'deferred',
          smtpStatusCode: 421,
          smtpResponse: `421 ${TOO_MANY_ERRORS.message}`,
        })
      expect(
        await seed.sql(`SELECT reason, source_email_id FROM suppressions WHERE address = 'bad@example.com'`),
      ).toEqual([{ reason: 'hard_bounce', source_email_id: id }])
    } finally {
      relay.rcpt = () => 'accept'
    }
  })
})
