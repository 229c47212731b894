import { guardRpc, projectRef, projectResolver, routeHandler, rpcRequestId } from '@mailer/bus'
import {
  type Caller,
  isMailerError,
  MAILER_RPC_METHODS,
  type MailerRpcMethodName,
  MailerRpcRequest,
  ROUTES,
} from '@mailer/contracts'
import type { EmailContext } from '../app.js'
import { parseRpcArgs, routePartsFor, rpcProjectError } from '../domain/rpc-calls.js'

/**
 * MailerRpc (interface.md part 4 "RPC", libs/contracts/src/rpc.ts): `rpc.mailer.<method>` with
 * `{ project: <slug>, args }`. Each method runs the handler of its REST route (served by this
 * process; register after serveSend and serveEmails) with an RPC caller: live, no API key,
 * the project by slug. Nothing here decides anything the route does not.
 */
export function serveMailerRpc(ctx: EmailContext): void {
  const { bus, logger } = ctx.rt
  const resolver = projectResolver(bus)
  const calls = ctx.rt.metrics.counter('rpc_calls_total', 'MailerRpc calls, by method and outcome', [
    'method',
    'outcome',
  ])

  for (const method of Object.keys(MAILER_RPC_METHODS) as MailerRpcMethodName[]) {
    const m = MAILER_RPC_METHODS[method]
    const route = ROUTES.find((r) => r.method === m.route.method && r.path === m.route.path)
    if (!route) throw new Error(`MailerRpc ${method}: no route ${m.route.method} ${m.route.path}`)
    const handler = routeHandler(bus, route.subject)

    bus.serve(
      m.subject,
      MailerRpcRequest,
      (req, msg) => {
        const requestId = rpcRequestId(msg)
        return guardRpc(bus, m.subject, requestId, async () => {
          try {
            const resolved = await resolver.resolve(req.project)
            const refused = rpcProjectError(resolved)
            if (refused) throw refused
            const args = parseRpcArgs(method, req.args)
            const caller: Caller = {
              requestId,
              via: 'rpc',
              project: projectRef(resolved),
              apiKeyId: null,
              mode: 'live',
            }
            logger.debug({ requestId, method, projectId: resolved.id }, 'rpc call')
            const result = await handler({ caller, ...routePartsFor(method, args) })
            calls.inc({ method, outcome: 'ok' })
            return result
          } catch (e) {
            // `get` answers null for an email the project does not have (interface.md part 4).
            if (method === 'get' && isMailerError(e) && e.code === 'email_not_found') {
              calls.inc({ method, outcome: 'ok' })
              return null
            }
            calls.inc({ method, outcome: isMailerError(e) && e.status < 500 ? 'rejected' : 'error' })
            throw e
          }
        })
      },
      { queue: 'email' },
    )
  }
}
