import { describe, expect, it } from 'vitest'
import { CreateBroadcastBody, UpdateBroadcastBody } from './broadcasts.js'
import { SendEmailInput } from './emails.js'
import { CreateProjectBody, UpdateProjectBody } from './projects.js'

// A broadcast's `from` and a project's `defaultFrom` become a send's `from` without passing the
// send's own checks: a sender the send refuses must be refused where it is first given.
describe('every field that becomes a from', () => {
  const bad = 'Billing\u001b]0;pwned\u0007 <billing@acme.test>'
  const good = 'Billing <billing@acme.test>'
  const broadcast = { audienceId: 'aud_1', subject: 'Hi', html: '<p>Hi</p>' }

  it('refuses control characters in the display name, as a send does', () => {
    expect(SendEmailInput.safeParse({ from: bad, to: 'a@b.test' }).success).toBe(false)
    expect(CreateBroadcastBody.safeParse({ ...broadcast, from: bad }).success).toBe(false)
    expect(UpdateBroadcastBody.safeParse({ from: bad }).success).toBe(false)
    expect(CreateProjectBody.safeParse({ slug: 'acme', name: 'Acme', defaultFrom: bad }).success).toBe(false)
    expect(UpdateProjectBody.safeParse({ defaultFrom: bad }).success).toBe(false)
  })

  it('takes a plain mailbox everywhere', () => {
    expect(CreateBroadcastBody.safeParse({ ...broadcast, from: good }).success).toBe(true)
    expect(UpdateBroadcastBody.safeParse({ from: good }).success).toBe(true)
    expect(CreateProjectBody.safeParse({ slug: 'acme', name: 'Acme', defaultFrom: good }).success).toBe(true)
    expect(UpdateProjectBody.safeParse({ defaultFrom: null }).success).toBe(true)
  })
})
