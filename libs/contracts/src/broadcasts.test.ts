import { describe, expect, it } from 'vitest'
import { broadcastEmailKey, parseBroadcastEmailKey, UpdateBroadcastBody } from './broadcasts.js'
import { ContactInput } from './contacts.js'
import { newId } from './ids.js'

describe('broadcast email keys', () => {
  it('round-trip a broadcast and a contact, and refuse other keys', () => {
    const broadcastId = newId('broadcast')
    const contactId = newId('contact')
    expect(parseBroadcastEmailKey(broadcastEmailKey(broadcastId, contactId))).toEqual({
      broadcastId,
      contactId,
    })
    for (const other of [
      null,
      undefined,
      '',
      'order-42',
      `bc:${broadcastId}`,
      `bc:${contactId}:${broadcastId}`,
    ]) {
      expect(parseBroadcastEmailKey(other)).toBeNull()
    }
  })
})

describe('contact and broadcast bodies', () => {
  it('lower-case contact emails and refuse non-addresses', () => {
    expect(ContactInput.parse({ email: ' Ann@Example.COM ' }).email).toBe('ann@example.com')
    expect(ContactInput.safeParse({ email: 'ann' }).success).toBe(false)
  })

  it('keep a broadcast update strict: unknown fields are refused', () => {
    expect(UpdateBroadcastBody.safeParse({ status: 'sent' }).success).toBe(false)
    expect(UpdateBroadcastBody.parse({ text: null })).toEqual({ text: null })
  })
})
