import type { RouteRequest } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import { safeRouteInput } from './route-input.js'

const req = (params: Record<string, string>, query: Record<string, unknown> = {}): RouteRequest => ({
  caller: { requestId: 'req_1', via: 'api', project: null, apiKeyId: null, mode: 'live' },
  params,
  query,
  headers: {},
})

describe('safeRouteInput', () => {
  it('passes ordinary input through unchanged', () => {
    const r = req({ id: 'wh_01ABC' }, { limit: '10', tag: ['a', 'b'] })
    expect(safeRouteInput(r)).toBe(r)
  })

  it('turns a NUL in a path parameter into U+FFFD, which no id holds', () => {
    expect(safeRouteInput(req({ id: 'wh_\u0000x', other: 'ok' })).params).toEqual({
      id: 'wh_\uFFFDx',
      other: 'ok',
    })
  })

  it('refuses a NUL in a query value as invalid_query naming it', () => {
    for (const q of [{ emailId: 'a\u0000' }, { tag: ['ok', 'b\u0000'] }])
      expect(() => safeRouteInput(req({}, q))).toThrow(
        expect.objectContaining({ code: 'invalid_query', param: Object.keys(q)[0], status: 400 }),
      )
  })
})
