import { describe, expect, it } from 'vitest'
import type { ClaimedEmail } from './claimed-email.js'
import { buildMessage, messageIdFor, RenderError, senderDomain } from './message.js'

const email: ClaimedEmail = {
  id: 'email_01KAAAAAAAAAAAAAAAAAAAAAAA',
  requestId: 'req_1',
  projectId: 'proj_1',
  mode: 'live',
  from: 'Acme Billing <billing@Mail.Acme.test>',
  replyTo: ['support@acme.test'],
  to: ['a@x.test'],
  cc: ['c@x.test'],
  bcc: ['hidden@x.test'],
  subject: 'Your invoice',
  tags: {},
  trackOpens: false,
  trackClicks: false,
  attempts: 1,
  claimedAt: new Date(),
  sentAt: null,
  createdAt: new Date(),
  dueAt: new Date(),
  content: null,
  recipients: [],
}
const content = {
  html: '<p>Hi</p>',
  text: 'Hi',
  headers: { 'X-Campaign': 'spring' },
  attachments: [
    // As the email service stores it: every field present, a null contentId, the decoded size.
    {
      filename: 'a.pdf',
      content: 'JVBERi0=',
      type: 'application/pdf',
      disposition: 'attachment',
      contentId: null,
      size: 5,
    },
    { filename: 'logo.png', content: 'iVBO', disposition: 'inline', contentId: 'logo' },
  ],
}

describe('buildMessage', () => {
  it('uses the sending domain for Message-ID and puts only this attempt’s recipients in the envelope', () => {
    expect(senderDomain(email.from)).toBe('mail.acme.test')
    const m = buildMessage(email, content, ['c@x.test', 'hidden@x.test'])
    expect(m.messageId).toBe('<email_01KAAAAAAAAAAAAAAAAAAAAAAA@mail.acme.test>')
    expect(m.messageId).toBe(messageIdFor(email))
    expect(m.envelope).toEqual({ from: 'billing@Mail.Acme.test', to: ['c@x.test', 'hidden@x.test'] })
    // An internationalised sender domain is the punycode one its setup stored: its DKIM key and
    // Message-ID are under that name (under the Unicode form no key is found: it would go out
    // unsigned).
    expect(senderDomain('Bücher <news@Bücher.test>')).toBe('xn--bcher-kva.test')
    expect(messageIdFor({ ...email, from: 'news@bücher.test' })).toBe(
      '<email_01KAAAAAAAAAAAAAAAAAAAAAAA@xn--bcher-kva.test>',
    )
    expect(m).toMatchObject({
      from: { name: 'Acme Billing', address: 'billing@Mail.Acme.test' },
      to: ['a@x.test'],
      cc: ['c@x.test'],
      replyTo: [{ name: '', address: 'support@acme.test' }],
    })
    // Bcc recipients are reached through the envelope only.
    expect(m.bcc).toBeUndefined()
    expect(m.headers).toEqual({ 'X-Campaign': 'spring' })
  })

  it('maps stored attachments to base64 parts with type, disposition and content id', () => {
    const m = buildMessage(email, content, ['a@x.test'])
    expect(m.attachments).toEqual([
      {
        filename: 'a.pdf',
        content: 'JVBERi0=',
        encoding: 'base64',
        contentType: 'application/pdf',
        contentDisposition: 'attachment',
      },
      {
        filename: 'logo.png',
        content: 'iVBO',
        encoding: 'base64',
        contentDisposition: 'inline',
        cid: 'logo',
      },
    ])
  })

  it('refuses stored content it cannot trust instead of sending something else', () => {
    expect(() => buildMessage(email, { ...content, attachments: [{ filename: 'x' }] }, ['a@x.test'])).toThrow(
      RenderError,
    )
    expect(() => buildMessage(email, { ...content, headers: { 'X-A': 1 } }, ['a@x.test'])).toThrow(
      RenderError,
    )
    expect(() => messageIdFor({ ...email, from: 'not an address' })).toThrow(RenderError)
  })
})
