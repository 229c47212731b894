import { compileTemplate } from '@mailer/templating'
import { describe, expect, it } from 'vitest'
import { contactVariables, personalize } from './personalize.js'

const broadcast = {
  id: 'bc_01HZZZZZZZZZZZZZZZZZZZZZZZ',
  from: 'News <news@acme.test>',
  subject: 'Hi {{first_name}}',
  html: '<p>Hello {{first_name}} {{last_name}} ({{plan}})</p><a href="{{unsubscribe_url}}">unsubscribe</a>',
  text: null,
}
const contact = {
  id: 'ct_01HYYYYYYYYYYYYYYYYYYYYYYY',
  email: 'ann@example.com',
  firstName: 'Ann',
  lastName: '<Lee>',
  data: { plan: 'pro', email: 'forged@evil.test' },
}
const url = 'https://mail.acme.test/u/abc.def'
const MAX = 10 * 1024 * 1024

describe('contactVariables', () => {
  it("merges the contact's data under the reserved names", () => {
    expect(contactVariables(contact, url)).toEqual({
      plan: 'pro',
      email: 'ann@example.com',
      first_name: 'Ann',
      last_name: '<Lee>',
      unsubscribe_url: url,
    })
  })
})

describe('personalize', () => {
  const template = compileTemplate(broadcast)

  it('renders the content, escapes html, and adds one-click unsubscribe headers, tag and key', () => {
    const input = personalize(broadcast, template, contact, url, MAX)
    expect(input).toMatchObject({
      from: broadcast.from,
      to: 'ann@example.com',
      subject: 'Hi Ann',
      headers: { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      tags: { broadcast_id: broadcast.id },
      idempotencyKey: `bc:${broadcast.id}:${contact.id}`,
    })
    expect(input.html).toContain('Hello Ann &lt;Lee&gt; (pro)')
    expect(input.html).toContain(`href="${url.replace(/=/g, '&#x3D;')}"`)
    expect(input.text).toContain('Hello Ann <Lee> (pro)')
  })

  it('refuses a contact whose subject renders empty', () => {
    const t = compileTemplate({ ...broadcast, subject: '{{first_name}}' })
    expect(() => personalize(broadcast, t, { ...contact, firstName: null }, url, MAX)).toThrow(/subject/)
  })

  it('refuses a contact whose html and text render empty: a send needs a body', () => {
    const t = compileTemplate({ ...broadcast, html: '{{first_name}}', text: null })
    expect(() => personalize(broadcast, t, { ...contact, firstName: null }, url, MAX)).toThrow(
      expect.objectContaining({ code: 'invalid_template_data', param: 'html' }),
    )
  })

  it('refuses a contact whose html and text together pass the largest email, as the email service would', () => {
    const t = compileTemplate({ ...broadcast, html: '<p>{{#if big}}é{{/if}}{{first_name}}</p>', text: 'x' })
    // html "<p>éAnn</p>" is 12 bytes (é is two), text 1.
    expect(personalize(broadcast, t, { ...contact, data: { big: true } }, url, 13).html).toBe('<p>éAnn</p>')
    expect(() => personalize(broadcast, t, { ...contact, data: { big: true } }, url, 12)).toThrow(
      expect.objectContaining({ code: 'payload_too_large', param: 'html' }),
    )
    expect(personalize(broadcast, t, contact, url, 12).html).toBe('<p>Ann</p>')
  })
})
