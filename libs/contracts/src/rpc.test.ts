import { describe, expect, it } from 'vitest'
import { ROUTES } from './routes/index.js'
import {
  AdminRpcRequest,
  adminRpcOperations,
  adminRpcSubject,
  MAILER_RPC_METHODS,
  MailerRpcRequest,
} from './rpc.js'
import { RPC } from './subjects.js'

describe('MailerRpc protocol', () => {
  it('runs each method on a route of the catalog', () => {
    for (const [name, m] of Object.entries(MAILER_RPC_METHODS)) {
      const route = ROUTES.find((r) => r.method === m.route.method && r.path === m.route.path)
      expect(route, name).toBeDefined()
      expect(route?.mirror, name).toBe(true)
      expect(m.subject).toBe(RPC.mailer[name as keyof typeof RPC.mailer])
    }
  })

  it('parses requests and their args', () => {
    expect(MailerRpcRequest.parse({ project: 'acme', args: ['email_1'] })).toEqual({
      project: 'acme',
      args: ['email_1'],
    })
    expect(MailerRpcRequest.safeParse({ args: [] }).success).toBe(false)
    expect(MAILER_RPC_METHODS.send.args.safeParse([{ to: 'a@b.c' }, { idempotencyKey: 'k' }]).success).toBe(
      true,
    )
    expect(MAILER_RPC_METHODS.send.args.safeParse([{ to: 'a@b.c' }]).success).toBe(true)
    expect(MAILER_RPC_METHODS.get.args.safeParse([]).success).toBe(false)
    expect(MAILER_RPC_METHODS.list.args.safeParse([]).success).toBe(true)
  })
})

describe('AdminRpc protocol', () => {
  const ops = adminRpcOperations(ROUTES)

  it('has one uniquely named operation per admin route and per mirrored project route', () => {
    const expected = ROUTES.filter((r) => r.auth === 'admin' || r.mirror).length
    expect(ops).toHaveLength(expected)
    expect(new Set(ops.map((o) => o.subject)).size).toBe(expected)
    expect(ops.find((o) => o.route.path === '/v1/admin/projects' && o.route.method === 'POST')).toMatchObject(
      {
        operation: 'auth.projects.create',
        subject: 'rpc.admin.auth.projects.create',
        scope: 'admin',
      },
    )
    expect(ops.find((o) => o.route.path === '/v1/me')).toBeUndefined()
    expect(
      ops.filter((o) => o.scope === 'project').every((o) => o.route.auth === 'project' && o.route.mirror),
    ).toBe(true)
    expect(adminRpcSubject('email.emails.send')).toBe('rpc.admin.email.emails.send')
  })

  it('fills defaults for params, query and headers', () => {
    expect(AdminRpcRequest.parse({ project: 'acme', body: { to: 'a@b.c' } })).toEqual({
      project: 'acme',
      params: {},
      query: {},
      headers: {},
      body: { to: 'a@b.c' },
    })
  })
})
