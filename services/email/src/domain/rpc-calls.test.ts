import { MailerError } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import { parseRpcArgs, routePartsFor, rpcProjectError } from './rpc-calls.js'

const project = {
  id: 'proj_1',
  slug: 'acme',
  name: 'Acme',
  dailyLimit: 0,
  rpcEnabled: true,
  disabled: false,
  defaultFrom: null,
}

describe('MailerRpc project checks', () => {
  it('lets an enabled project with RPC on through', () => {
    expect(rpcProjectError(project)).toBeNull()
  })

  it('refuses a disabled project, then one with RPC off', () => {
    expect(rpcProjectError({ ...project, disabled: true, rpcEnabled: false })).toMatchObject({
      status: 403,
      type: 'permission_error',
      code: 'project_disabled',
    })
    expect(rpcProjectError({ ...project, rpcEnabled: false })).toMatchObject({
      status: 403,
      type: 'permission_error',
      code: 'rpc_disabled',
    })
  })
})

describe('MailerRpc arguments', () => {
  it('checks args against the protocol, naming the bad argument', () => {
    expect(parseRpcArgs('get', ['email_1'])).toEqual(['email_1'])
    const missing = (() => {
      try {
        parseRpcArgs('get', [])
      } catch (e) {
        return e
      }
    })() as MailerError
    expect(missing).toBeInstanceOf(MailerError)
    expect(missing).toMatchObject({ code: 'invalid_body', status: 400, param: 'args' })
    expect(() => parseRpcArgs('send', [{}, { idempotencyKey: '' }])).toThrow(
      expect.objectContaining({ code: 'invalid_body', param: 'args.1.idempotencyKey' }),
    )
    // The batch itself is the route's to check, as POST /v1/emails/batch checks it (rpc.int.test.ts);
    // a missing one is still the protocol's.
    expect(parseRpcArgs('sendBatch', ['not a list'])).toEqual(['not a list'])
    expect(() => parseRpcArgs('sendBatch', [])).toThrow(
      expect.objectContaining({ code: 'invalid_body', param: 'args' }),
    )
  })

  it("copies opts.idempotencyKey into the send input, winning over the input's own", () => {
    const input = { to: 'a@b.c', text: 'x', idempotencyKey: 'own' }
    expect(routePartsFor('send', [input, { idempotencyKey: 'wins' }]).body).toEqual({
      ...input,
      idempotencyKey: 'wins',
    })
    expect(routePartsFor('send', [input]).body).toBe(input)
    expect(routePartsFor('send', [input, {}]).body).toBe(input)
    // Not an object: left as it is, for the route to refuse.
    expect(routePartsFor('send', ['nope', { idempotencyKey: 'k' }]).body).toBe('nope')
  })

  it('maps each method onto its REST twin', () => {
    expect(routePartsFor('sendBatch', [[{ a: 1 }]])).toEqual({
      params: {},
      query: {},
      body: [{ a: 1 }],
      headers: {},
    })
    expect(routePartsFor('get', ['email_1']).params).toEqual({ id: 'email_1' })
    expect(routePartsFor('cancel', ['email_2']).params).toEqual({ id: 'email_2' })
    expect(routePartsFor('list', [{ status: 'queued', limit: 5 }]).query).toEqual({
      status: 'queued',
      limit: 5,
    })
    expect(routePartsFor('list', []).query).toEqual({})
  })
})
