import { waitFor } from '@mailer/testing'
import { describe, expect, it } from 'vitest'
import { useStack } from '../support/use-stack.js'

// A relay without SMTPUTF8 (RFC 6531), such as Postfix with smtputf8_enable=no or a provider's
// SMTP endpoint: it cannot take a non-ASCII local part, and says so the way Postfix does.
const PROJECT = 'proj_01KDISPATCHSMTPUTF8TEST000'
const NON_ASCII = /[^\x20-\x7e]/
const rcptSeen: string[] = []

const { relay, seed } = useStack([], {
  relay: { hideSMTPUTF8: true },
  dispatcher: true,
  seed: true,
  before: () => seed.domain(PROJECT, 'mail.utf8.test'),
})
relay.rcpt = (a) => {
  rcptSeen.push(a)
  return NON_ASCII.test(a)
    ? { code: 553, message: '5.6.7 Must declare SMTPUTF8 to send unicode address' }
    : 'accept'
}

const until = (id: string, statuses: string[]) =>
  waitFor(
    async () => {
      const row = (await seed.sql('SELECT status FROM emails WHERE id = $1', [id]))[0]
      return statuses.includes(row?.status)
    },
    { timeoutMs: 15_000, what: `email ${id} in ${statuses}` },
  )

describe('a relay without SMTPUTF8', () => {
  it('a non-ASCII local part fails that recipient without bouncing or suppressing it; the others are delivered', async () => {
    const id = await seed.email(PROJECT, {
      from: 'hi@mail.utf8.test',
      to: ['jürgen@example.com', 'ann@example.com'],
      subject: 'Hallo',
      text: 'x',
    })
    await seed.dispatch(id, PROJECT)
    await until(id, ['failed', 'bounced'])

    const recipients = await seed.sql(
      'SELECT address, status, bounce_type, smtp_status FROM email_recipients WHERE email_id = $1 ORDER BY address',
      [id],
    )
    expect(recipients.map((r) => [r.address, r.status, r.bounce_type])).toEqual([
      ['ann@example.com', 'delivered', null],
      ['jürgen@example.com', 'failed', null],
    ])
    expect(recipients[1]!.smtp_status).toBe(553)
    const failed = await seed.sql(
      `SELECT payload FROM email_events WHERE email_id = $1 AND type = 'email.failed'`,
      [id],
    )
    expect(failed.map((e) => e.payload.data)).toEqual([
      expect.objectContaining({ code: 'message_rejected', message: expect.stringContaining('SMTPUTF8') }),
    ])
    expect(await seed.sql(`SELECT 1 FROM suppressions WHERE address = 'jürgen@example.com'`)).toEqual([])
    // RFC 6531 3.4: the address is not offered to a relay that cannot take it.
    expect(rcptSeen.filter((a) => NON_ASCII.test(a))).toEqual([])
    expect(relay.forEmail(id).map((d) => d.envelopeTo)).toEqual([['ann@example.com']])
  })
})
