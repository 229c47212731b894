import { waitFor } from '@mailer/testing'
import { dkimVerify } from 'mailauth/lib/dkim/verify'
import { simpleParser } from 'mailparser'
import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain, publishedDkimResolver } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// From POST /v1/emails to the relay and back to GET /v1/emails/:id, through every real service
// on the path (gateway, auth, email with its due sweeper, dispatcher).
const { client, relay } = useStack(['auth', 'email', 'gateway'], {
  dispatcher: { PLATFORM_LIMIT_RETRY_SECONDS: '1' },
})
let live: string
let from: string
let dkimResolver: (name: string, type: string) => Promise<string[][]>

beforeAll(async () => {
  const p = await projectWithDomain(client, 'e2e-send', 'mail.e2e.test')
  live = p.live
  from = p.from
  dkimResolver = await publishedDkimResolver(client, live)
})

const finalRecord = (id: string, statuses: string[]) =>
  waitFor(
    async () => {
      const r = await client.get(`/v1/emails/${id}`, live)
      return statuses.includes(r.body.status) ? r.body : null
    },
    { timeoutMs: 20_000, what: `email ${id} in ${statuses}` },
  )

describe('send → deliver, end to end', () => {
  it('an accepted email reaches the relay signed and complete, and its record shows the delivery', async () => {
    const sent = await client.post('/v1/emails', live, {
      from,
      to: ['Ann@Example.com'],
      bcc: 'audit@example.com',
      subject: 'Welcome aboard',
      html: '<p>Welcome!</p>',
      text: 'Welcome!',
      headers: { 'X-Entity-Ref': 'abc-1' },
      attachments: [{ filename: 'terms.txt', content: Buffer.from('the terms').toString('base64') }],
      tags: { flow: 'signup' },
    })
    expect(sent.status).toBe(202)
    const id = sent.body.id as string

    const record = await finalRecord(id, ['delivered'])
    expect(record.attempts).toBe(1)
    expect(record.sentAt).toEqual(expect.any(String))
    expect(record.deliveredAt).toEqual(expect.any(String))
    expect(record.recipients).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          address: 'ann@example.com',
          kind: 'to',
          status: 'delivered',
          smtpStatus: 250,
        }),
        expect.objectContaining({
          address: 'audit@example.com',
          kind: 'bcc',
          status: 'delivered',
          smtpStatus: 250,
        }),
      ]),
    )
    expect(record.events.map((e: any) => e.type)).toEqual([
      'email.queued',
      'email.sent',
      'email.delivered',
      'email.delivered',
    ])
    const delivered = record.events.find((e: any) => e.type === 'email.delivered')
    expect(delivered.data).toMatchObject({
      tags: { flow: 'signup' },
      delivery: { status: 'delivered', provider: 'smtp' },
    })

    const got = relay.forEmail(id)
    expect(got).toHaveLength(1)
    expect(got[0]!.envelopeTo.sort()).toEqual(['ann@example.com', 'audit@example.com'])
    const mail = await simpleParser(got[0]!.raw)
    expect(mail.messageId).toBe(`<${id}@mail.e2e.test>`)
    expect(mail.subject).toBe('Welcome aboard')
    expect(mail.html).toContain('<p>Welcome!</p>')
    expect(mail.headers.get('x-entity-ref')).toBe('abc-1')
    expect(mail.headers.has('bcc')).toBe(false)
    expect(mail.attachments[0]).toMatchObject({ filename: 'terms.txt', contentType: 'text/plain' })
    expect(mail.attachments[0]!.content.toString()).toBe('the terms')
    const verified = await dkimVerify(got[0]!.raw, { resolver: dkimResolver } as any)
    expect(verified.results[0]).toMatchObject({ signingDomain: 'mail.e2e.test', status: { result: 'pass' } })
  })

  it('a platform-limit answer is retried by the email service’s sweeper and then delivered', async () => {
    let refused = 0
    relay.data = (to) =>
      to.includes('quota@example.com') && refused++ === 0
        ? { code: 451, message: '4.7.1 Daily quota exceeded' }
        : 'accept'
    try {
      const sent = await client.post('/v1/emails', live, {
        from,
        to: 'quota@example.com',
        subject: 'Later',
        text: 'x',
      })
      expect(sent.status).toBe(202)
      const record = await finalRecord(sent.body.id, ['delivered'])
      expect(record.attempts).toBe(2)
      expect(record.events.map((e: any) => e.type)).toEqual([
        'email.queued',
        'email.retrying',
        'email.sent',
        'email.delivered',
      ])
      expect(record.events[1].data).toMatchObject({ code: 'platform_limit', attempt: 1, delaySeconds: 1 })
      expect(relay.forEmail(sent.body.id)).toHaveLength(1)
    } finally {
      relay.data = () => 'accept'
    }
  })

  it('a recipient added to the suppression list while its email waits is not sent to: rejected, email.rejected', async () => {
    // Scheduled for later; the address is listed (by an operator), then the email is made due.
    const sent = await client.post('/v1/emails', live, {
      from,
      to: ['keep@example.com', 'Gone@Example.com'],
      subject: 'Later, to two',
      text: 'x',
      scheduledAt: new Date(Date.now() + 3600_000).toISOString(),
    })
    expect(sent.status).toBe(202)
    expect(sent.body.status).toBe('scheduled')
    const listed = await client.post('/v1/admin/suppressions', client.admin, { address: 'gone@example.com' })
    expect(listed.status).toBe(201)
    const due = await client.patch(`/v1/emails/${sent.body.id}`, live, {
      scheduledAt: new Date(Date.now() + 1_000).toISOString(),
    })
    expect(due.status).toBe(200)

    const record = await finalRecord(sent.body.id, ['rejected'])
    expect(record.lastError).toBe('Not sent to gone@example.com: on the suppression list (manual)')
    expect(
      record.recipients.map((r: any) => [r.address, r.status, r.smtpStatus, r.smtpResponse]).sort(),
    ).toEqual([
      ['gone@example.com', 'rejected', null, null],
      ['keep@example.com', 'delivered', 250, expect.any(String)],
    ])
    // Sent to one recipient of the two: what analytics counts as sent.
    expect(record.events.find((e: any) => e.type === 'email.sent').data.recipientCount).toBe(1)
    const rejected = record.events.filter((e: any) => e.type === 'email.rejected')
    expect(rejected).toHaveLength(1)
    expect(rejected[0].recipient).toBe('gone@example.com')
    expect(rejected[0].data).toMatchObject({
      recipient: 'gone@example.com',
      delivery: { status: 'rejected', provider: 'smtp', smtpStatusCode: null, smtpResponse: null },
      suppression: { reason: 'manual' },
      terminal: true,
    })
    const got = relay.forEmail(sent.body.id)
    expect(got).toHaveLength(1)
    expect(got[0]!.envelopeTo).toEqual(['keep@example.com'])
    // The message's To header still names both: what the recipients see does not change.
    expect((await simpleParser(got[0]!.raw)).to).toMatchObject({ text: 'keep@example.com, gone@example.com' })
  })
})
