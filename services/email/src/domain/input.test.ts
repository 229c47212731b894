import { describe, expect, it } from 'vitest'
import { canonicalJson, parseSendInput, requestHash } from './input.js'

const base = { from: 'a@b.test', to: 'c@d.test', subject: 'Hi', html: '<p>x</p>' }

describe('parseSendInput', () => {
  it('takes a single address as a list of one', () => {
    expect(parseSendInput(base).to).toEqual(['c@d.test'])
  })

  it('names the first problem in param', () => {
    expect(() => parseSendInput({ ...base, to: ['ok@x.test', 'bad'] })).toThrow(
      expect.objectContaining({ code: 'invalid_body', param: 'to.1' }),
    )
    expect(() => parseSendInput({ ...base, colour: 'red' })).toThrow(
      expect.objectContaining({ code: 'invalid_body', param: 'colour' }),
    )
    expect(() => parseSendInput({ ...base, subject: 'a\r\nBcc: x@y.test' })).toThrow(
      expect.objectContaining({ param: 'subject' }),
    )
    expect(() => parseSendInput(undefined)).toThrow(expect.objectContaining({ code: 'missing_body' }))
    expect(() => parseSendInput([base])).toThrow(expect.objectContaining({ code: 'invalid_body' }))
  })

  it('gives a tag name\'s rule, not zod\'s "Invalid key in record"', () => {
    for (const name of ['', 'k'.repeat(65)]) {
      expect(() => parseSendInput({ ...base, tags: { [name]: 'v' } })).toThrow(
        expect.objectContaining({
          code: 'invalid_body',
          message: `tags.${name}: a tag name has 1-64 characters`,
          param: `tags.${name}`,
        }),
      )
    }
  })

  it('needs one of html, text or template', () => {
    const { html: _h, ...rest } = base
    expect(() => parseSendInput(rest)).toThrow(
      expect.objectContaining({ code: 'invalid_body', param: 'html' }),
    )
    expect(parseSendInput({ ...rest, text: 'x' }).text).toBe('x')
    // Given but empty is no body either; one empty part beside a full one is fine.
    for (const empty of [{ html: '' }, { text: '' }, { html: '', text: '' }]) {
      expect(() => parseSendInput({ ...rest, ...empty })).toThrow(
        expect.objectContaining({ code: 'invalid_body', param: 'html' }),
      )
    }
    expect(parseSendInput({ ...rest, html: '', text: 'x' }).text).toBe('x')
    expect(parseSendInput({ ...rest, text: '', template: 'welcome' }).template).toBe('welcome')
  })
})

describe('requestHash', () => {
  it('ignores key order and the idempotency key itself', () => {
    const a = parseSendInput({ ...base, tags: { x: '1', y: '2' }, idempotencyKey: 'k1' })
    const b = parseSendInput({
      tags: { y: '2', x: '1' },
      html: base.html,
      subject: 'Hi',
      to: ['c@d.test'],
      from: 'a@b.test',
    })
    expect(requestHash(a)).toBe(requestHash(b))
    expect(requestHash(parseSendInput({ ...base, subject: 'Other' }))).not.toBe(requestHash(b))
  })

  it('takes scheduledAt: null and data: null as left out, as the send does', () => {
    const plain = requestHash(parseSendInput(base))
    expect(requestHash(parseSendInput({ ...base, scheduledAt: null }))).toBe(plain)
    const { html: _html, ...noBody } = base
    const templated = { ...noBody, template: 'welcome' }
    expect(requestHash(parseSendInput({ ...templated, data: null }))).toBe(
      requestHash(parseSendInput(templated)),
    )
    // Any other value still counts.
    expect(requestHash(parseSendInput({ ...base, scheduledAt: '2030-01-01T00:00:00Z' }))).not.toBe(plain)
    expect(requestHash(parseSendInput({ ...templated, data: {} }))).not.toBe(
      requestHash(parseSendInput(templated)),
    )
  })

  it('canonical JSON sorts keys at every level and drops undefined', () => {
    expect(canonicalJson({ b: [{ z: 1, a: 2 }], a: undefined, c: null })).toBe(
      '{"b":[{"a":2,"z":1}],"c":null}',
    )
  })
})

describe('NUL characters', () => {
  it('are invalid_body at their path, since PostgreSQL text cannot hold them', () => {
    expect(() => parseSendInput({ ...base, html: 'a\u0000b' })).toThrow(
      expect.objectContaining({ code: 'invalid_body', param: 'html' }),
    )
    expect(() => parseSendInput({ ...base, headers: { 'X-A': '\u0000' } })).toThrow(
      expect.objectContaining({ param: 'headers.X-A' }),
    )
    expect(() => parseSendInput({ ...base, tags: { 'k\u0000': 'v' } })).toThrow(
      expect.objectContaining({ param: 'tags.k\u0000' }),
    )
  })
})
