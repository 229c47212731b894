import { describe, expect, it } from 'vitest'
import { advanceRecipient, deriveEmailStatus } from './status.js'

describe('deriveEmailStatus', () => {
  it('follows the precedence of contract.md part 3', () => {
    expect(deriveEmailStatus(['delivered', 'complained', 'bounced'])).toBe('complained')
    expect(deriveEmailStatus(['delivered', 'bounced', 'rejected'])).toBe('bounced')
    expect(deriveEmailStatus(['delivered', 'rejected', 'failed'])).toBe('rejected')
    expect(deriveEmailStatus(['delivered', 'failed'])).toBe('failed')
    expect(deriveEmailStatus(['delivered', 'delivered'])).toBe('delivered')
    expect(deriveEmailStatus(['delivered', 'deferred'])).toBe('deferred')
    expect(deriveEmailStatus(['delivered', 'queued'])).toBe('sent')
    expect(deriveEmailStatus(['sent', 'sent'])).toBe('sent')
    expect(deriveEmailStatus(['queued', 'queued'])).toBe('queued')
    expect(deriveEmailStatus(['canceled', 'canceled'])).toBe('canceled')
    expect(deriveEmailStatus(['test', 'test'])).toBe('test')
    expect(deriveEmailStatus(['test', 'delivered'])).toBe('test')
  })
})

describe('advanceRecipient', () => {
  it('never moves a recipient down the ranking', () => {
    expect(advanceRecipient('delivered', 'deferred')).toBe('delivered')
    expect(advanceRecipient('bounced', 'delivered')).toBe('bounced')
    expect(advanceRecipient('delivered', 'complained')).toBe('complained')
    expect(advanceRecipient('queued', 'deferred')).toBe('deferred')
    expect(advanceRecipient('failed', 'rejected')).toBe('rejected')
    expect(advanceRecipient('canceled', 'complained')).toBe('canceled')
    // The dev route's fakes move a test email's recipient as they moved it from queued.
    expect(advanceRecipient('test', 'delivered')).toBe('delivered')
    expect(advanceRecipient('test', 'sent')).toBe('sent')
  })
})
