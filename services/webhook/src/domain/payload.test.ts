import { EventPayload } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import { deliveryBody, orderPayload, testEvent } from './payload.js'

describe('payload', () => {
  it('orders fields as documented without changing values', () => {
    const stored = {
      data: {
        tags: { a: '1' },
        subject: 's',
        delivery: { status: 'x' },
        from: 'f',
        emailId: 'e',
        recipient: null,
      },
      type: 't',
      id: 'evt_1',
      createdAt: 'c',
    }
    expect(Object.keys(orderPayload(stored))).toEqual(['id', 'type', 'createdAt', 'data'])
    expect(Object.keys(orderPayload(stored).data as object)).toEqual([
      'emailId',
      'recipient',
      'from',
      'subject',
      'tags',
      'delivery',
    ])
    expect(JSON.parse(deliveryBody(stored))).toEqual(stored)
  })

  it('makes a synthetic delivered event marked as a test', () => {
    const e = testEvent()
    expect(EventPayload.parse(e)).toEqual(e)
    expect(e.id).toMatch(/^evt_[0-9A-Z]{26}$/)
    expect(e.type).toBe('email.delivered')
    expect(e.data.test).toBe(true)
    expect(e.data.delivery).toMatchObject({ status: 'delivered' })
  })
})
