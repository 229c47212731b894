import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { ERROR_CODES, ERROR_TYPE_BY_STATUS, MailerError } from './errors.js'
import { decodeCursor, encodeCursor } from './pagination.js'
import { parseBody, parseQuery } from './validation.js'

describe('MailerError', () => {
  it('takes status and type from the catalog (type follows status)', () => {
    for (const [code, status] of Object.entries(ERROR_CODES)) {
      const e = new MailerError(code, 'm')
      expect(e.status).toBe(status)
      expect(e.type).toBe(ERROR_TYPE_BY_STATUS[status])
    }
    expect(new MailerError('invalid_sender', 'x', { param: 'from' }).toJSON()).toEqual({
      type: 'permission_error',
      code: 'invalid_sender',
      message: 'x',
      param: 'from',
      status: 403,
    })
  })

  it('survives a round trip as data', () => {
    const e = MailerError.from(JSON.parse(JSON.stringify(new MailerError('rate_limited', 'slow down'))))
    expect(e).toBeInstanceOf(MailerError)
    expect(e).toMatchObject({ code: 'rate_limited', status: 429, type: 'rate_limit_error', retryable: true })
  })
})

describe('parseBody / parseQuery', () => {
  const schema = z.object({ a: z.object({ b: z.string() }), n: z.number().optional() })
  it('missing body is missing_body', () => {
    expect(() => parseBody(schema, undefined)).toThrowError(
      expect.objectContaining({ code: 'missing_body', status: 400 }),
    )
  })
  it('names the dotted path of the first problem', () => {
    expect(() => parseBody(schema, { a: { b: 1 } })).toThrowError(
      expect.objectContaining({ code: 'invalid_body', param: 'a.b' }),
    )
  })
  it('lets a schema pick its own code', () => {
    const s = z.array(z.string()).superRefine((v, ctx) => {
      if (v.length > 1)
        ctx.addIssue({
          code: 'custom',
          message: 'too many',
          params: { code: 'too_many_recipients' },
          path: ['to'],
        })
    })
    expect(() => parseBody(s, ['a', 'b'])).toThrowError(
      expect.objectContaining({ code: 'too_many_recipients', param: 'to' }),
    )
  })
  it('query problems are invalid_query', () => {
    expect(() => parseQuery(z.object({ limit: z.coerce.number().max(5) }), { limit: '9' })).toThrowError(
      expect.objectContaining({ code: 'invalid_query', param: 'limit' }),
    )
  })
})

describe('cursor', () => {
  it('round-trips and rejects garbage', () => {
    const c = { createdAt: new Date('2026-01-02T03:04:05.678Z'), id: 'email_01ARZ3NDEKTSV4RRFFQ69G5FAV' }
    expect(decodeCursor(encodeCursor(c), 'email')).toEqual(c)
    expect(() => decodeCursor('garbage', 'email')).toThrowError(
      expect.objectContaining({ code: 'invalid_query', param: 'cursor' }),
    )
  })

  it("refuses another list's cursor", () => {
    const c = { createdAt: new Date('2026-01-02T03:04:05.678Z'), id: 'evt_01ARZ3NDEKTSV4RRFFQ69G5FAV' }
    expect(decodeCursor(encodeCursor(c), 'event')).toEqual(c)
    expect(() => decodeCursor(encodeCursor(c), 'email')).toThrowError(
      expect.objectContaining({ code: 'invalid_query', param: 'cursor' }),
    )
  })
})

describe('unknown fields', () => {
  it('names the unknown field in param', () => {
    expect(() => parseBody(z.strictObject({ a: z.string() }), { a: 'x', nope: 1 })).toThrowError(
      expect.objectContaining({ code: 'invalid_body', param: 'nope' }),
    )
  })
})
