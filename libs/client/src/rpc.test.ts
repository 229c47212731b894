import { describe, expect, it } from 'vitest'
import { MailerApiError } from './errors.js'
import { AdminRpcClient, decodeRpcReply, decodeServiceError, MailerRpcClient } from './rpc.js'

const bytes = (s: string) => new TextEncoder().encode(s)

describe('RPC error decoding', () => {
  it('decodes SERVICE_ERROR: replies into a MailerApiError with every field', () => {
    const text = `SERVICE_ERROR:${JSON.stringify({ type: 'permission_error', code: 'rpc_disabled', message: 'RPC is off', param: 'project' })}`
    let caught: unknown
    try {
      decodeRpcReply(bytes(text))
    } catch (e) {
      caught = e
    }
    expect(caught).toBeInstanceOf(MailerApiError)
    expect(caught).toMatchObject({
      type: 'permission_error',
      code: 'rpc_disabled',
      message: 'RPC is off',
      param: 'project',
      status: 403,
    })
  })

  it('derives the status from the type when the JSON has none', () => {
    const cases: [string, number][] = [
      ['validation_error', 400],
      ['authentication_error', 401],
      ['permission_error', 403],
      ['not_found', 404],
      ['conflict', 409],
      ['unprocessable', 422],
      ['rate_limit_error', 429],
      ['internal_error', 500],
    ]
    for (const [type, status] of cases) {
      expect(decodeServiceError(`SERVICE_ERROR:{"type":"${type}","code":"x","message":"m"}`)?.status).toBe(
        status,
      )
    }
  })

  it('prefers the status carried in the JSON (503 service_unavailable, 413)', () => {
    const e = decodeServiceError(
      'SERVICE_ERROR:{"type":"internal_error","code":"service_unavailable","message":"m","status":503}',
    )
    expect(e?.status).toBe(503)
    expect(
      decodeServiceError(
        'SERVICE_ERROR:{"type":"validation_error","code":"payload_too_large","message":"m","status":413}',
      )?.status,
    ).toBe(413)
  })

  it('finds the error inside a longer message, as a thrown binding error carries it', () => {
    const e = decodeServiceError(
      'Error: SERVICE_ERROR:{"type":"not_found","code":"email_not_found","message":"no"}',
    )
    expect(e).toMatchObject({ code: 'email_not_found', status: 404, param: undefined })
  })

  it('returns null for text it cannot decode, and decodeRpcReply then throws a plain Error', () => {
    expect(decodeServiceError('timeout')).toBeNull()
    expect(decodeServiceError('SERVICE_ERROR:{not json')).toBeNull()
    expect(decodeServiceError('SERVICE_ERROR:{"message":"no code"}')).toBeNull()
    expect(() => decodeRpcReply(bytes('SERVICE_ERROR:{oops'))).toThrow(Error)
    expect(() => decodeRpcReply(bytes('SERVICE_ERROR:{oops'))).not.toThrow(MailerApiError)
  })

  it('returns success replies as their JSON, null included', () => {
    expect(decodeRpcReply(bytes('{"id":"email_1","status":"queued"}'))).toEqual({
      id: 'email_1',
      status: 'queued',
    })
    expect(decodeRpcReply(bytes('null'))).toBeNull()
  })
})

describe('RPC clients check their arguments before any request', () => {
  const nc = { request: async () => ({ data: bytes('null') }) }

  it('throws TypeError at once without a connection or a project slug', () => {
    expect(() => new MailerRpcClient(undefined as never, 'acme')).toThrow(TypeError)
    expect(() => new MailerRpcClient({} as never, 'acme')).toThrow(TypeError)
    expect(() => new MailerRpcClient(nc, '')).toThrow(TypeError)
    expect(() => new MailerRpcClient(nc, undefined as never)).toThrow(TypeError)
    expect(() => new AdminRpcClient(null as never)).toThrow(TypeError)
    expect(new MailerRpcClient(nc, 'acme').project).toBe('acme')
  })
})
