import { describe, expect, it } from 'vitest'
import { mergeByEmail } from './contact-merge.js'

describe('mergeByEmail', () => {
  it('keeps one entry per email in first-seen order, later fields winning', () => {
    const merged = mergeByEmail([
      { email: 'a@x.test', firstName: 'A', data: { plan: 'free' } },
      { email: 'b@x.test' },
      { email: 'a@x.test', lastName: 'Z', data: { plan: 'pro' } },
    ])
    expect(merged).toEqual([
      { email: 'a@x.test', firstName: 'A', lastName: 'Z', data: { plan: 'pro' } },
      { email: 'b@x.test' },
    ])
  })

  it('does not let a later entry without a field erase it', () => {
    const merged = mergeByEmail([
      { email: 'a@x.test', unsubscribed: true },
      { email: 'a@x.test', firstName: 'A' },
    ])
    expect(merged).toEqual([{ email: 'a@x.test', unsubscribed: true, firstName: 'A' }])
  })

  it('does not let a later null erase a field either (null keeps, as in the upsert)', () => {
    const merged = mergeByEmail([
      { email: 'a@x.test', firstName: 'A', unsubscribed: true, data: { plan: 'pro' } },
      { email: 'a@x.test', firstName: null, unsubscribed: null, data: null },
    ])
    expect(merged).toEqual([{ email: 'a@x.test', firstName: 'A', unsubscribed: true, data: { plan: 'pro' } }])
  })
})
