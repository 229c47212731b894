import { SendEmailInput } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import { resendInput } from './resend.js'

const email = {
  id: 'email_01',
  from: 'Acme <hi@acme.test>',
  to: ['a@x.test'],
  cc: [],
  bcc: ['b@x.test'],
  replyTo: [],
  subject: 'Hello',
  tags: { campaign: 'welcome', resent_from: 'email_00' },
  trackOpens: true,
  trackClicks: false,
}

describe('resendInput', () => {
  it('rebuilds a valid send input from the stored email, tagged resent_from', () => {
    const input = resendInput(email, {
      html: '<p>Hi</p>',
      text: null,
      headers: { 'X-Campaign': 'w' },
      attachments: [
        {
          filename: 'a.txt',
          content: 'aGk=',
          type: 'text/plain',
          disposition: 'attachment',
          contentId: null,
          size: 2,
        },
      ],
    })
    expect(input).toEqual({
      from: 'Acme <hi@acme.test>',
      to: ['a@x.test'],
      bcc: ['b@x.test'],
      subject: 'Hello',
      html: '<p>Hi</p>',
      headers: { 'X-Campaign': 'w' },
      attachments: [{ filename: 'a.txt', content: 'aGk=', type: 'text/plain', disposition: 'attachment' }],
      tags: { campaign: 'welcome', resent_from: 'email_01' },
      trackOpens: true,
      trackClicks: false,
    })
    expect(SendEmailInput.safeParse(input).success).toBe(true)
  })

  it('leaves out what the original did not have', () => {
    const input = resendInput(
      { ...email, bcc: [], tags: {} },
      { html: null, text: 'Hi', headers: {}, attachments: [] },
    )
    expect(Object.keys(input).sort()).toEqual([
      'from',
      'subject',
      'tags',
      'text',
      'to',
      'trackClicks',
      'trackOpens',
    ])
    expect(input.tags).toEqual({ resent_from: 'email_01' })
  })

  it("an email accepted before today's input rules is resent without what they refuse", () => {
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`t${i}`, 'v']))
    const input = resendInput(
      {
        ...email,
        from: 'Acme \u001b[2J <hi@acme.test>',
        replyTo: ['Help \u0007 <help@acme.test>'],
        subject: 'Hello \u001b[31mthere',
        tags: fifty,
      },
      {
        html: '<p>Hi</p>',
        text: null,
        headers: { Sender: 'x@evil.test', 'X-Keep': 'yes', 'x-keep': 'twice', 'In-Reply-To': '<a@x.test>' },
        attachments: [
          { filename: 'empty.txt', content: '', type: 'text/plain', disposition: 'attachment', size: 0 },
          { filename: 'a.txt', content: 'aGk=', type: 'text/plain', disposition: 'attachment', size: 2 },
        ],
      },
    )
    expect(input).toMatchObject({
      from: 'Acme [2J <hi@acme.test>',
      replyTo: ['Help  <help@acme.test>'],
      subject: 'Hello [31mthere',
      headers: { 'X-Keep': 'yes', 'In-Reply-To': '<a@x.test>' },
      attachments: [{ filename: 'a.txt', content: 'aGk=', type: 'text/plain', disposition: 'attachment' }],
      tags: fifty,
    })
    expect(SendEmailInput.safeParse(input).success).toBe(true)
  })
})
