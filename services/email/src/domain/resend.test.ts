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
})
