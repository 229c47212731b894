import { describe, expect, it } from 'vitest'
import { assertStorable, MAX_JSON_DEPTH, unstorablePart } from './storable-json.js'

const nested = (depth: number): unknown => {
  let v: unknown = 'leaf'
  for (let i = 0; i < depth; i++) v = { a: v }
  return v
}

describe('unstorablePart', () => {
  it('accepts ordinary bodies, paired surrogates (emoji) included', () => {
    expect(
      unstorablePart({ subject: 'Hi 😀', to: ['a@b.c'], tags: { k: 'v' }, n: 1, ok: true, x: null }),
    ).toBeNull()
    expect(unstorablePart(nested(MAX_JSON_DEPTH))).toBeNull()
  })

  it('names the first string or key holding a NUL or a lone surrogate', () => {
    expect(unstorablePart({ subject: 'a\u0000b' })).toEqual({
      path: 'subject',
      problem: 'text cannot contain NUL characters',
    })
    expect(unstorablePart({ tags: { k: 'x\udc00' } })?.path).toBe('tags.k')
    expect(unstorablePart({ to: ['ok@x.test', 'y\ud800'] })?.path).toBe('to.1')
    expect(unstorablePart({ tags: { ['\ud83d']: 'v' } })?.path).toBe('tags.\ud83d')
    expect(unstorablePart(JSON.parse('["\\ud800"]'))?.problem).toMatch(/lone UTF-16 surrogate/)
  })

  it('refuses nesting deeper than the limit without walking all of it', () => {
    const hit = unstorablePart(JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`))
    expect(hit?.problem).toBe(`nested more than ${MAX_JSON_DEPTH} levels deep`)
    expect(unstorablePart(nested(MAX_JSON_DEPTH + 1))?.path.split('.')).toHaveLength(MAX_JSON_DEPTH)
  })
})

describe('assertStorable', () => {
  it('throws 400 invalid_body with the path as param', () => {
    expect(() => assertStorable({ html: '\ud800' })).toThrow(
      expect.objectContaining({ code: 'invalid_body', param: 'html', status: 400 }),
    )
    expect(() => assertStorable('\u0000')).toThrow(
      expect.objectContaining({ code: 'invalid_body', param: undefined }),
    )
    expect(() => assertStorable({ a: 'fine' })).not.toThrow()
  })
})
