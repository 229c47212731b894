import { describe, expect, it } from 'vitest'
import { type ChunkEntry, settleChunk } from './chunk-outcome.js'

const ok = (id: string) => ({ id, status: 'queued' })
const err = (code: string) => ({ error: { code } })

describe('settleChunk', () => {
  it('moves the cursor to the last contact and tallies every outcome', () => {
    const entries: ChunkEntry[] = [
      { contactId: 'ct_1', item: 0 },
      { contactId: 'ct_2', skipped: 'unsubscribed' },
      { contactId: 'ct_3', item: 1 },
      { contactId: 'ct_4', item: 2 },
      { contactId: 'ct_5', item: 3 },
      { contactId: 'ct_6', skipped: 'render_failed' },
    ]
    const s = settleChunk('ct_0', entries, [
      ok('email_1'),
      { id: 'email_2', status: 'queued', idempotent: true },
      err('recipient_suppressed'),
      err('invalid_body'),
    ])
    expect(s).toEqual({
      cursor: 'ct_6',
      pause: null,
      tally: { accepted: 1, unsubscribed: 1, duplicate: 1, suppressed: 1, rejected: 1, render_failed: 1 },
    })
  })

  it('stops before the first limited item so it is retried on resume', () => {
    const entries: ChunkEntry[] = [
      { contactId: 'ct_1', item: 0 },
      { contactId: 'ct_2', item: 1 },
      { contactId: 'ct_3', skipped: 'unsubscribed' },
      { contactId: 'ct_4', item: 2 },
    ]
    const s = settleChunk(null, entries, [
      ok('email_1'),
      err('daily_limit_exceeded'),
      err('daily_limit_exceeded'),
    ])
    expect(s.cursor).toBe('ct_1')
    expect(s.pause).toBe('daily_limit_exceeded')
    expect(s.tally).toEqual({ accepted: 1, limited: 2 })
  })

  it('keeps the previous cursor when the first item is limited, and counts a mismatched key as sent', () => {
    const s = settleChunk('ct_9', [{ contactId: 'ct_10', item: 0 }], [err('rate_limited')])
    expect(s).toMatchObject({ cursor: 'ct_9', pause: 'rate_limited' })
    const again = settleChunk(null, [{ contactId: 'ct_1', item: 0 }], [err('idempotency_payload_mismatch')])
    expect(again).toMatchObject({ cursor: 'ct_1', tally: { duplicate: 1 } })
  })

  it('pauses before the first item whose sender is refused: every contact left would be refused too', () => {
    const entries: ChunkEntry[] = [
      { contactId: 'ct_1', item: 0 },
      { contactId: 'ct_2', item: 1 },
      { contactId: 'ct_3', item: 2 },
    ]
    for (const code of ['domain_not_verified', 'invalid_sender']) {
      const s = settleChunk(null, entries, [ok('email_1'), err(code), err(code)])
      expect(s).toEqual({ cursor: 'ct_1', pause: code, tally: { accepted: 1, sender_refused: 2 } })
    }
  })
})
