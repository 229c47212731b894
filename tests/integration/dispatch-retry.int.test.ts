import { waitFor } from '@mailer/testing'
import { describe, expect, it } from 'vitest'
import { useDispatcherOnly } from '../support/dispatcher-only.js'
import { emailRows } from '../support/email-rows.js'

// Retries with a shortened schedule: platform-limit retries after 1.5 s instead of an hour,
// transient backoff from 0.3 s, and 2 retries instead of 8 so exhausting them is quick. The
// breaker is kept out of the way (it has its own test file).
const PLATFORM_DELAY = 1.5
const PROJECT = 'proj_01KDISPATCHRETRYTEST000000'
const FROM = 'hi@mail.retry.test'

const { relay, seed, sweeper } = useDispatcherOnly(
  PROJECT,
  'mail.retry.test',
  {
    SMTP_TIMEOUT_SECONDS: '2',
    PLATFORM_LIMIT_RETRY_SECONDS: String(PLATFORM_DELAY),
    RETRY_BASE_SECONDS: '0.3',
    MAX_RETRIES: '2',
    BREAKER_MIN_CALLS: '10000',
  },
  { retries: true },
)

const { timeline, until } = emailRows(seed)

const QUOTA = { code: 451, message: '4.7.1 Daily sending quota exceeded' }

describe('platform limit (relay quota answers)', () => {
  it('puts the email back to queued with email.retrying, retries it later, then delivers it', async () => {
    const id = await seed.email(PROJECT, { from: FROM, to: ['ann@example.com'], subject: 'Quota', text: 'x' })
    let calls = 0
    relay.data = (to) => (to.includes('ann@example.com') && ++calls === 1 ? QUOTA : 'accept')
    // The retry waits for the sweeper, stopped until the waiting email has been read: it fell due
    // 1.5 s after the attempt, which a loaded machine could spend reading the rows before it.
    sweeper.stop()
    try {
      await seed.dispatch(id, PROJECT)

      const waiting = await until(
        id,
        (r) => r.status === 'queued' && r.next_attempt_at !== null,
        'queued for a retry',
      )
      expect(waiting.attempts).toBe(1)
      expect(waiting.last_error).toBe('451 4.7.1 Daily sending quota exceeded')
      const [retrying] = await timeline(id)
      expect(retrying!.type).toBe('email.retrying')
      expect(retrying!.payload.data).toMatchObject({
        recipient: null,
        code: 'platform_limit',
        message: '451 4.7.1 Daily sending quota exceeded',
        attempt: 1,
        delaySeconds: PLATFORM_DELAY,
      })
      // Scheduled exactly the platform-limit delay after the attempt.
      expect(waiting.next_attempt_at.getTime() - retrying!.created_at.getTime()).toBe(PLATFORM_DELAY * 1000)
      const recipient = (
        await seed.sql('SELECT status, smtp_status FROM email_recipients WHERE email_id = $1', [id])
      )[0]
      expect(recipient).toEqual({ status: 'queued', smtp_status: 451 })
    } finally {
      sweeper.start()
    }

    const done = await until(id, (r) => r.status === 'delivered', 'delivered')
    expect(done.attempts).toBe(2)
    expect((await timeline(id)).map((e) => e.type)).toEqual([
      'email.retrying',
      'email.sent',
      'email.delivered',
    ])
    expect(relay.forEmail(id)).toHaveLength(1)
  })

  it('fails the email with email.failed once the retries are used up; every email.failed is published', async () => {
    const id = await seed.email(PROJECT, { from: FROM, to: ['bob@example.com'], subject: 'Never', text: 'x' })
    relay.data = (to) => (to.includes('bob@example.com') ? QUOTA : 'accept')
    await seed.dispatch(id, PROJECT)

    const row = await until(id, (r) => r.status === 'failed', 'failed')
    expect(row).toMatchObject({
      attempts: 3,
      next_attempt_at: null,
      last_error: '451 4.7.1 Daily sending quota exceeded',
    })
    expect(row.failed_at).toBeInstanceOf(Date)
    const events = await timeline(id)
    expect(events.map((e) => e.type)).toEqual(['email.retrying', 'email.retrying', 'email.failed'])
    expect(events.map((e) => e.payload.data.attempt)).toEqual([1, 2, undefined])
    expect(events[2]!.payload.data).toMatchObject({
      code: 'retries_exhausted',
      message: '451 4.7.1 Daily sending quota exceeded',
    })
    expect((await seed.sql('SELECT status FROM email_recipients WHERE email_id = $1', [id]))[0].status).toBe(
      'failed',
    )
    expect(relay.forEmail(id)).toHaveLength(0)
    await waitFor(
      async () =>
        (await seed.publishedEvents()).some(
          (m) => m.event.type === 'email.failed' && m.event.data.emailId === id,
        ),
      {
        what: 'email.failed on the EVENTS stream',
      },
    )
  })
})

describe('transient failures', () => {
  it('a dropped connection defers the email; it is delivered once the relay recovers', async () => {
    relay.data = () => 'accept'
    // The relay cuts the first connection of this send, then answers again.
    relay.dropConnections(1)
    const id = await seed.email(PROJECT, { from: FROM, to: ['cy@example.com'], subject: 'Later', text: 'x' })
    await seed.dispatch(id, PROJECT)

    const done = await until(id, (r) => r.status === 'delivered', 'delivered')
    expect(done.attempts).toBe(2)
    const events = await timeline(id)
    expect(events.map((e) => [e.type, e.recipient])).toEqual([
      ['email.deferred', 'cy@example.com'],
      ['email.sent', null],
      ['email.delivered', 'cy@example.com'],
    ])
    expect(events[0]!.payload.data).toMatchObject({
      delivery: {
        status: 'deferred',
        provider: 'smtp',
        smtpStatusCode: null,
        smtpResponse: expect.stringMatching(/closed/i),
      },
      terminal: false,
    })
    // It came back after its backoff (0.3 s × 80-100 %), not at once.
    const waited = events[1]!.created_at.getTime() - events[0]!.created_at.getTime()
    expect(waited).toBeGreaterThanOrEqual(240)
    expect(relay.forEmail(id)).toHaveLength(1)
  })

  it('a connection lost in the middle of DATA defers every recipient; the retry delivers the message once', async () => {
    relay.data = () => 'accept'
    // Large enough to arrive in many chunks: the cut comes before the relay has the final dot.
    relay.cutInData = 1
    const id = await seed.email(PROJECT, {
      from: FROM,
      to: ['fay@example.com'],
      cc: ['gus@example.com'],
      subject: 'Cut',
      text: 'line of text\n'.repeat(200_000),
    })
    await seed.dispatch(id, PROJECT)

    const done = await until(id, (r) => r.status === 'delivered', 'delivered')
    expect(relay.cutInData).toBe(0)
    // The message had gone out whole (its final dot written), so the session sent it no second time.
    expect(done.attempts).toBe(2)
    const events = await timeline(id)
    expect(events.map((e) => [e.type, e.recipient])).toEqual([
      ['email.deferred', 'fay@example.com'],
      ['email.deferred', 'gus@example.com'],
      ['email.sent', null],
      ['email.delivered', 'fay@example.com'],
      ['email.delivered', 'gus@example.com'],
    ])
    for (const e of events.slice(0, 2))
      expect(e.payload.data.delivery).toMatchObject({ status: 'deferred', smtpStatusCode: null })
    const got = relay.forEmail(id)
    expect(got).toHaveLength(1)
    expect(got[0]!.envelopeTo.sort()).toEqual(['fay@example.com', 'gus@example.com'])
  })

  it("the relay refusing our sender or host at RCPT TO (Postfix's delayed restrictions) defers, never bounces or suppresses", async () => {
    // Postfix evaluates sender, client and HELO restrictions at RCPT TO (smtpd_delay_reject), so
    // a sender the relay login may not use is refused per recipient with a 5xx.
    let refusals = 2
    relay.rcpt = () =>
      refusals-- > 0
        ? { code: 553, message: `5.7.1 <${FROM}>: Sender address rejected: not owned by user relay-user` }
        : 'accept'
    try {
      const id = await seed.email(PROJECT, {
        from: FROM,
        to: ['hugo@example.com', 'iris@example.com'],
        subject: 'Sender',
        text: 'x',
      })
      await seed.dispatch(id, PROJECT)

      await until(id, (r) => r.status === 'delivered', 'delivered')
      const events = await timeline(id)
      expect(events.map((e) => [e.type, e.recipient])).toEqual([
        ['email.deferred', 'hugo@example.com'],
        ['email.deferred', 'iris@example.com'],
        ['email.sent', null],
        ['email.delivered', 'hugo@example.com'],
        ['email.delivered', 'iris@example.com'],
      ])
      expect(events[0]!.payload.data.delivery).toMatchObject({ status: 'deferred', smtpStatusCode: 553 })
      expect(
        await seed.sql(
          `SELECT address FROM suppressions WHERE address IN ('hugo@example.com', 'iris@example.com')`,
        ),
      ).toEqual([])
      expect(relay.forEmail(id)).toHaveLength(1)
    } finally {
      relay.rcpt = () => 'accept'
    }
  })

  it('"too many recipients" (552 or 452, 5.5.3) defers the recipients over the relay limit, never bounces or suppresses them', async () => {
    // RFC 5321 4.5.3.1.10: relays still answer 552 when a message has more recipients than they
    // take at once; the rest must go in a later transaction.
    const overLimit = new Map([
      ['gus@example.com', { code: 552, message: '5.5.3 Too many recipients' }],
      ['hal@example.com', { code: 452, message: '4.5.3 Recipient limit exceeded' }],
    ])
    relay.rcpt = (a) => {
      const answer = overLimit.get(a)
      overLimit.delete(a)
      return answer ?? 'accept'
    }
    try {
      const id = await seed.email(PROJECT, {
        from: FROM,
        to: ['fay@example.com', 'gus@example.com', 'hal@example.com'],
        subject: 'Many',
        text: 'x',
      })
      await seed.dispatch(id, PROJECT)

      await until(id, (r) => r.status === 'delivered', 'delivered')
      expect(relay.forEmail(id).map((d) => d.envelopeTo)).toEqual([
        ['fay@example.com'],
        ['gus@example.com', 'hal@example.com'],
      ])
      const events = await timeline(id)
      expect(events.filter((e) => e.type !== 'email.delivered').map((e) => [e.type, e.recipient])).toEqual([
        ['email.sent', null],
        ['email.deferred', 'gus@example.com'],
        ['email.deferred', 'hal@example.com'],
      ])
      expect(
        await seed.sql(
          `SELECT address FROM suppressions WHERE address IN ('gus@example.com', 'hal@example.com')`,
        ),
      ).toEqual([])
    } finally {
      relay.rcpt = () => 'accept'
    }
  })

  it('a 4xx for one recipient defers only that recipient; the retry reaches only it', async () => {
    let busy = 1
    relay.rcpt = (a) =>
      a === 'dan@example.com' && busy-- > 0
        ? { code: 450, message: '4.2.1 Mailbox busy, try later' }
        : 'accept'
    const id = await seed.email(PROJECT, {
      from: FROM,
      to: ['dan@example.com', 'eli@example.com'],
      subject: 'Half',
      text: 'x',
    })
    await seed.dispatch(id, PROJECT)

    await until(id, (r) => r.status === 'delivered', 'delivered')
    relay.rcpt = () => 'accept'
    expect(relay.forEmail(id).map((d) => d.envelopeTo)).toEqual([['eli@example.com'], ['dan@example.com']])
    const events = await timeline(id)
    expect(events.map((e) => [e.type, e.recipient])).toEqual([
      ['email.sent', null],
      ['email.deferred', 'dan@example.com'],
      ['email.delivered', 'eli@example.com'],
      ['email.delivered', 'dan@example.com'],
    ])
    expect(events[1]!.payload.data.delivery).toMatchObject({
      smtpStatusCode: 450,
      smtpResponse: '450 4.2.1 Mailbox busy, try later',
    })
  })
})

describe('email.failed', () => {
  it('comes once, when the email ends failed: not when one recipient is refused while another still waits', async () => {
    // jürgen is refused as a message at attempt 1 (a relay's 5.6.7: it cannot take the address);
    // bob1 is deferred at every attempt and runs out of retries at the third.
    relay.rcpt = (a) =>
      a.startsWith('jürgen@')
        ? { code: 553, message: '5.6.7 Must declare SMTPUTF8 to send unicode address' }
        : a.startsWith('bob1@')
          ? { code: 451, message: '4.3.0 bob1 later' }
          : 'accept'
    try {
      const id = await seed.email(PROJECT, {
        from: FROM,
        to: ['jürgen@example.com', 'bob1@example.com'],
        subject: 'Once',
        text: 'x',
      })
      await seed.dispatch(id, PROJECT)

      const row = await until(id, (r) => r.status === 'failed', 'failed')
      expect(row.attempts).toBe(3)
      expect(row.failed_at).toBeInstanceOf(Date)
      const refused = '553 5.6.7 Must declare SMTPUTF8 to send unicode address'
      expect(
        await seed.sql(
          'SELECT address, status, smtp_response FROM email_recipients WHERE email_id = $1 ORDER BY address',
          [id],
        ),
      ).toEqual([
        { address: 'bob1@example.com', status: 'failed', smtp_response: '451 4.3.0 bob1 later' },
        { address: 'jürgen@example.com', status: 'failed', smtp_response: refused },
      ])
      const events = await timeline(id)
      expect(events.map((e) => [e.type, e.recipient])).toEqual([
        ['email.deferred', 'bob1@example.com'],
        ['email.deferred', 'bob1@example.com'],
        ['email.failed', null],
      ])
      // The refusal (stored at attempt 1) is why the email failed, not bob1's last deferral.
      expect(events[2]!.payload.data).toMatchObject({ code: 'message_rejected', message: refused })
      expect(row.last_error).toBe(refused)
    } finally {
      relay.rcpt = () => 'accept'
    }
  })
})
