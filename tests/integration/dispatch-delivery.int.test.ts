import { waitFor } from '@mailer/testing'
import { dkimVerify } from 'mailauth/lib/dkim/verify'
import { simpleParser } from 'mailparser'
import { describe, expect, it } from 'vitest'
import { useStack } from '../support/use-stack.js'

// The dispatcher alone, against a real SMTP relay: emails are seeded as the email service stores
// them and their dispatch messages published to the EMAILS stream.
let dkim: { txtName: string; txt: string }
const PROJECT = 'proj_01KDISPATCHDELIVERYTEST000'
const { stack, relay, seed } = useStack([], {
  dispatcher: true,
  seed: true,
  before: async () => {
    dkim = await seed.domain(PROJECT, 'mail.acme.test')
  },
})

const emailRow = async (id: string) => (await seed.sql('SELECT * FROM emails WHERE id = $1', [id]))[0]
const recipients = async (id: string) =>
  seed.sql(
    'SELECT address, status, smtp_status, smtp_response, bounce_type FROM email_recipients WHERE email_id = $1 ORDER BY address',
    [id],
  )
const timeline = async (id: string) =>
  seed.sql<{ type: string; recipient: string | null; payload: any }>(
    'SELECT type, recipient, payload FROM email_events WHERE email_id = $1 ORDER BY created_at, id',
    [id],
  )
const until = (id: string, statuses: string[]) =>
  waitFor(async () => statuses.includes((await emailRow(id))?.status), {
    timeoutMs: 15_000,
    what: `email ${id} in ${statuses}`,
  })

const PDF = Buffer.from('%PDF-1.4 tiny invoice')
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3])

describe('delivery through the SMTP relay', () => {
  it('delivers the rendered, DKIM-signed message to every recipient once', async () => {
    const id = await seed.email(PROJECT, {
      from: 'Acme Billing <billing@mail.acme.test>',
      to: ['ann@example.com'],
      cc: ['carl@example.com'],
      bcc: ['audit@example.com'],
      replyTo: ['support@acme.test'],
      subject: 'Your invoice #42',
      html: '<p>Hello <b>Ann</b> <img src="cid:logo"></p>',
      text: 'Hello Ann',
      headers: { 'X-Campaign': 'spring', 'List-Unsubscribe': '<https://acme.test/u/1>' },
      attachments: [
        { filename: 'invoice.pdf', content: PDF.toString('base64'), type: 'application/pdf' },
        {
          filename: 'logo.png',
          content: PNG.toString('base64'),
          type: 'image/png',
          disposition: 'inline',
          contentId: 'logo',
        },
      ],
      tags: { kind: 'invoice' },
    })
    await seed.dispatch(id, PROJECT)
    await until(id, ['delivered'])

    const got = relay.forEmail(id)
    expect(got).toHaveLength(1)
    expect(got[0]!.envelopeFrom).toBe('billing@mail.acme.test')
    expect(got[0]!.envelopeTo.sort()).toEqual(['ann@example.com', 'audit@example.com', 'carl@example.com'])

    const mail = await simpleParser(got[0]!.raw)
    expect(mail.messageId).toBe(`<${id}@mail.acme.test>`)
    expect(mail.from?.value).toEqual([{ name: 'Acme Billing', address: 'billing@mail.acme.test' }])
    expect((mail.to as any).value.map((a: any) => a.address)).toEqual(['ann@example.com'])
    expect((mail.cc as any).value.map((a: any) => a.address)).toEqual(['carl@example.com'])
    expect(mail.bcc).toBeUndefined()
    expect(mail.headers.has('bcc')).toBe(false)
    expect((mail.replyTo as any).value[0].address).toBe('support@acme.test')
    expect(mail.subject).toBe('Your invoice #42')
    expect(mail.html).toContain('<p>Hello <b>Ann</b>')
    expect(mail.text?.trim()).toBe('Hello Ann')
    expect(mail.headers.get('x-campaign')).toBe('spring')
    expect(mail.headerLines.find((h) => h.key === 'list-unsubscribe')?.line).toBe(
      'List-Unsubscribe: <https://acme.test/u/1>',
    )
    const pdf = mail.attachments.find((a) => a.filename === 'invoice.pdf')!
    expect(pdf.contentType).toBe('application/pdf')
    expect(pdf.contentDisposition).toBe('attachment')
    expect(pdf.content.equals(PDF)).toBe(true)
    const logo = mail.attachments.find((a) => a.filename === 'logo.png')!
    expect(logo).toMatchObject({ contentType: 'image/png', contentDisposition: 'inline', cid: 'logo' })
    expect(logo.content.equals(PNG)).toBe(true)

    // The signature verifies against the key published in the domain's DNS record.
    const resolver = async (name: string, type: string) => {
      if (type === 'TXT' && name === dkim.txtName) return [[dkim.txt]]
      throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' })
    }
    const verified = await dkimVerify(got[0]!.raw, { resolver } as any)
    expect(verified.results).toHaveLength(1)
    expect(verified.results[0]).toMatchObject({
      signingDomain: 'mail.acme.test',
      selector: 'mailer1',
      status: { result: 'pass' },
    })
  })

  it('records the outcome: recipients delivered, email timestamps, sent and delivered events on the timeline and the stream', async () => {
    const id = await seed.email(PROJECT, {
      from: 'hi@mail.acme.test',
      to: ['dora@example.com', 'eve@example.com'],
      subject: 'Hi',
      text: 'plain',
    })
    await seed.dispatch(id, PROJECT)
    await until(id, ['delivered'])

    const row = await emailRow(id)
    expect(row).toMatchObject({
      attempts: 1,
      message_id: `<${id}@mail.acme.test>`,
      next_attempt_at: null,
      claimed_at: null,
    })
    expect(row.sent_at).toBeInstanceOf(Date)
    expect(row.delivered_at).toBeInstanceOf(Date)
    expect((await recipients(id)).map((r) => [r.address, r.status, r.smtp_status])).toEqual([
      ['dora@example.com', 'delivered', 250],
      ['eve@example.com', 'delivered', 250],
    ])
    const events = await timeline(id)
    expect(events.map((e) => [e.type, e.recipient])).toEqual([
      ['email.sent', null],
      ['email.delivered', 'dora@example.com'],
      ['email.delivered', 'eve@example.com'],
    ])
    expect(events[0]!.payload.data).toMatchObject({
      emailId: id,
      recipient: null,
      from: 'hi@mail.acme.test',
      subject: 'Hi',
      messageId: `<${id}@mail.acme.test>`,
    })
    expect(events[1]!.payload.data).toMatchObject({
      delivery: { status: 'delivered', provider: 'smtp', smtpStatusCode: 250 },
      terminal: true,
    })
    expect(events[1]!.payload.data.delivery.deliveryTimeMs).toEqual(expect.any(Number))
    expect(events[1]!.payload.data.delivery.smtpResponse).toMatch(/^250 /)

    const published = await waitFor(async () => {
      const mine = (await seed.publishedEvents()).filter((m) => m.event.data.emailId === id)
      return mine.length === 3 ? mine : null
    })
    expect(published.map((m) => m.event.type).sort()).toEqual([
      'email.delivered',
      'email.delivered',
      'email.sent',
    ])
    expect(published.every((m) => m.projectId === PROJECT)).toBe(true)
  })

  it('an email scheduled weeks ahead is delivered once, its delivery time counted from its scheduled time', async () => {
    // Accepted 26 days ago for now: a delivery time counted from acceptance (over 2^31 ms) did not
    // fit its column, the outcome could not be written and every redelivery sent it again.
    const id = await seed.email(PROJECT, {
      from: 'hi@mail.acme.test',
      to: ['late@example.com'],
      subject: 'Due now',
      text: 'x',
    })
    await seed.sql(
      `UPDATE emails SET created_at = now() - interval '26 days', scheduled_at = now() - interval '2 seconds'
       WHERE id = $1`,
      [id],
    )
    const before = relay.delivered.length
    await seed.dispatch(id, PROJECT)
    await until(id, ['delivered'])
    const [r] = await seed.sql<{ delivery_ms: number }>(
      'SELECT delivery_ms FROM email_recipients WHERE email_id = $1',
      [id],
    )
    expect(r!.delivery_ms).toBeGreaterThanOrEqual(2_000)
    expect(r!.delivery_ms).toBeLessThan(60_000)
    const delivered = (await timeline(id)).find((e) => e.type === 'email.delivered')!
    expect(delivered.payload.data.delivery.deliveryTimeMs).toBe(r!.delivery_ms)
    expect(
      relay.delivered.slice(before).filter((d) => d.envelopeTo.includes('late@example.com')),
    ).toHaveLength(1)
  })

  it('a 550 for one recipient bounces and suppresses it while the others are delivered', async () => {
    relay.rcpt = (a) =>
      a === 'nobody@example.com' || a === 'grumpy@example.com' || a === 'moody@example.com'
        ? { code: 550, message: '5.1.1 No such user here' }
        : 'accept'
    try {
      const id = await seed.email(PROJECT, {
        from: 'hi@mail.acme.test',
        to: ['frank@example.com', 'nobody@example.com'],
        cc: ['grumpy@example.com', 'moody@example.com'],
        subject: 'Partly',
        text: 'x',
      })
      // Two of them are listed while the relay is being asked, after the claim read the list (an
      // address listed before is not sent to at all: dispatch-retry): a complaint, and an entry
      // added by hand, which the bounce replaces as the stronger reason (as an admin add ranks them).
      const release = relay.holdRcpt()
      await seed.dispatch(id, PROJECT)
      await waitFor(() => relay.rcptHeld > 0, { timeoutMs: 10_000, what: 'RCPT TO asked' })
      await seed.sql(`INSERT INTO suppressions (address, reason) VALUES ('grumpy@example.com', 'complaint')`)
      await seed.sql(
        `INSERT INTO suppressions (address, reason, created_at) VALUES ('moody@example.com', 'manual', '2026-01-02T03:04:05Z')`,
      )
      release()
      await until(id, ['bounced'])

      expect(relay.forEmail(id).map((d) => d.envelopeTo)).toEqual([['frank@example.com']])
      expect((await recipients(id)).map((r) => [r.address, r.status, r.smtp_status, r.bounce_type])).toEqual([
        ['frank@example.com', 'delivered', 250, null],
        ['grumpy@example.com', 'bounced', 550, 'hard'],
        ['moody@example.com', 'bounced', 550, 'hard'],
        ['nobody@example.com', 'bounced', 550, 'hard'],
      ])
      const bounced = (await timeline(id)).find(
        (e) => e.type === 'email.bounced' && e.recipient === 'nobody@example.com',
      )!
      expect(bounced.payload.data).toMatchObject({
        bounce: { type: 'hard', reason: '550 5.1.1 No such user here' },
        delivery: { status: 'bounced', provider: 'smtp', smtpStatusCode: 550 },
        terminal: true,
      })
      const sup = await seed.sql(
        `SELECT address, reason, source_email_id, created_at FROM suppressions
         WHERE address IN ('nobody@example.com', 'grumpy@example.com', 'moody@example.com') ORDER BY address`,
      )
      // A new hard bounce is suppressed; an existing complaint is never downgraded; a manual entry
      // becomes the bounce, from this email, and keeps when it was first listed.
      expect(sup.map(({ created_at: _, ...r }) => r)).toEqual([
        { address: 'grumpy@example.com', reason: 'complaint', source_email_id: null },
        { address: 'moody@example.com', reason: 'hard_bounce', source_email_id: id },
        { address: 'nobody@example.com', reason: 'hard_bounce', source_email_id: id },
      ])
      expect(sup[1].created_at).toEqual(new Date('2026-01-02T03:04:05Z'))
    } finally {
      relay.rcpt = () => 'accept'
    }
  })

  it('a 5xx to the message itself fails the email without bouncing anyone', async () => {
    relay.data = () => ({ code: 554, message: '5.7.1 Message rejected as spam' })
    try {
      const id = await seed.email(PROJECT, {
        from: 'hi@mail.acme.test',
        to: ['gina@example.com'],
        subject: 'Spammy',
        text: 'x',
      })
      await seed.dispatch(id, PROJECT)
      await until(id, ['failed'])
      const failed = (await timeline(id)).filter((e) => e.type === 'email.failed')
      expect(failed).toHaveLength(1)
      expect(failed[0]!.payload.data).toMatchObject({
        code: 'message_rejected',
        message: '554 5.7.1 Message rejected as spam',
        recipient: null,
      })
      expect((await emailRow(id)).failed_at).toBeInstanceOf(Date)
      expect(await seed.sql(`SELECT 1 FROM suppressions WHERE address = 'gina@example.com'`)).toEqual([])
    } finally {
      relay.data = () => 'accept'
    }
  })

  it('content past its retention is not sent, purged or not: the email fails with content_expired', async () => {
    const id = await seed.email(PROJECT, {
      from: 'hi@mail.acme.test',
      to: ['hana@example.com'],
      subject: 'Expired',
      text: 'x',
    })
    // The API already answers 404 content_expired for it; the purge has not run yet.
    await seed.sql(`UPDATE email_contents SET expires_at = now() - interval '1 hour' WHERE email_id = $1`, [
      id,
    ])
    await seed.dispatch(id, PROJECT)
    await until(id, ['failed'])
    const failed = (await timeline(id)).filter((e) => e.type === 'email.failed')
    expect(failed.map((e) => e.payload.data.code)).toEqual(['content_expired'])
    expect(relay.delivered.filter((d) => d.emailId === id)).toEqual([])
  })

  it('duplicate and late dispatch messages, and canceled emails, send nothing', async () => {
    const id = await seed.email(PROJECT, {
      from: 'hi@mail.acme.test',
      to: ['hal@example.com'],
      subject: 'Once',
      text: 'x',
    })
    await seed.dispatch(id, PROJECT, 0)
    await until(id, ['delivered'])
    await seed.dispatch(id, PROJECT, 1)
    await seed.dispatch(id, PROJECT, 2)

    const canceled = await seed.email(PROJECT, {
      from: 'hi@mail.acme.test',
      to: ['ida@example.com'],
      subject: 'Never',
      text: 'x',
    })
    await seed.sql(`UPDATE emails SET status = 'canceled', canceled_at = now() WHERE id = $1`, [canceled])
    await seed.dispatch(canceled, PROJECT)
    await waitFor(() => seed.dispatchDrained(), { what: 'every dispatch message handled' })

    expect(relay.forEmail(id)).toHaveLength(1)
    expect(relay.forEmail(canceled)).toHaveLength(0)
    expect((await emailRow(id)).attempts).toBe(1)
    expect((await emailRow(canceled)).status).toBe('canceled')
    expect((await timeline(id)).filter((e) => e.type === 'email.sent')).toHaveLength(1)
  })

  it('exports delivery metrics', async () => {
    const res = await fetch(`http://127.0.0.1:${stack.metricsPort('dispatcher')}/metrics`)
    const text = await res.text()
    expect(text).toMatch(/^mailer_dispatcher_deliveries_total\{outcome="delivered"\} \d+/m)
    expect(text).toMatch(/^mailer_dispatcher_deliveries_total\{outcome="bounced"\} 3$/m)
    expect(text).toMatch(/^mailer_dispatcher_delivery_seconds_count \d+/m)
    expect(text).toMatch(/^mailer_dispatcher_relay_breaker_open 0$/m)
  })
})
