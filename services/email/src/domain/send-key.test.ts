import { describe, expect, it } from 'vitest'
import { sendKey } from './send-key.js'

const bc = 'bc_01JDZ2V6Q0Z8Y7X6W5V4T3S2R1'
const ct = 'ct_01JDZ2V6Q0Z8Y7X6W5V4T3S2R2'

describe('sendKey', () => {
  it("keeps an API send's key as it is, whatever its form, outside the broadcasts' namespace", () => {
    for (const source of ['http', 'batch', 'rpc', 'admin'])
      expect(sendKey(`bc:${bc}:${ct}`, source)).toEqual({ key: `bc:${bc}:${ct}`, broadcast: null })
    expect(sendKey(null, 'http')).toEqual({ key: null, broadcast: null })
  })

  it("reads a broadcast email's broadcast and contact from its key", () => {
    expect(sendKey(`bc:${bc}:${ct}`, 'broadcast')).toEqual({
      key: `bc:${bc}:${ct}`,
      broadcast: { broadcastId: bc, contactId: ct },
    })
  })

  it("refuses a broadcast email without a broadcast email's key", () => {
    for (const key of [null, 'mine', `bc:${bc}`])
      expect(() => sendKey(key, 'broadcast')).toThrow(expect.objectContaining({ code: 'invalid_body' }))
  })
})
