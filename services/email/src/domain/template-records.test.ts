import { describe, expect, it } from 'vitest'
import { applyPatch, decodeVersionCursor, encodeVersionCursor, storedVariables } from './template-records.js'

describe('applyPatch', () => {
  const cur = {
    subject: 'S',
    html: '<p>h</p>',
    text: 't',
    variables: [{ name: 'a', required: true, example: null }],
  }
  it('keeps what the patch leaves out and removes what it sets to null', () => {
    expect(applyPatch(cur, { html: '<b>x</b>', text: null })).toEqual({
      ...cur,
      html: '<b>x</b>',
      text: null,
    })
    expect(applyPatch(cur, { variables: [] })).toEqual({ ...cur, variables: [] })
    expect(applyPatch(cur, {})).toEqual(cur)
  })
})

describe('version cursors', () => {
  it('round-trip and reject anything else as invalid_query', () => {
    expect(decodeVersionCursor(encodeVersionCursor(17))).toBe(17)
    expect(decodeVersionCursor(undefined)).toBeUndefined()
    expect(() => decodeVersionCursor('garbage')).toThrow(
      expect.objectContaining({ code: 'invalid_query', param: 'cursor' }),
    )
  })
})

describe('storedVariables', () => {
  it('reads stored variables and treats unreadable JSON as none', () => {
    expect(storedVariables([{ name: 'x', required: false, example: 1 }])).toEqual([
      { name: 'x', required: false, example: 1 },
    ])
    expect(storedVariables('nope')).toEqual([])
  })
})
