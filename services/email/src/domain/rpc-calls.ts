import {
  MAILER_RPC_METHODS,
  MailerError,
  type MailerRpcMethodName,
  type ResolveProjectResponse,
  type RouteRequest,
} from '@mailer/contracts'

/** The parts of a route request that a MailerRpc call fills from its `args`. */
export type RouteParts = Pick<RouteRequest, 'params' | 'query' | 'body' | 'headers'>

/**
 * The project a MailerRpc call names must be enabled and allow RPC (interface.md part 4):
 * 403 `project_disabled`, then 403 `rpc_disabled`. Null when the call may go ahead.
 */
export function rpcProjectError(p: ResolveProjectResponse): MailerError | null {
  if (p.disabled) return new MailerError('project_disabled', `Project '${p.slug}' is disabled`)
  if (!p.rpcEnabled) return new MailerError('rpc_disabled', `RPC is disabled for project '${p.slug}'`)
  return null
}

/** The method's `args` checked against the protocol; 400 `invalid_body` with `param` `args.<i>`. */
export function parseRpcArgs(method: MailerRpcMethodName, args: unknown[]): unknown[] {
  const res = MAILER_RPC_METHODS[method].args.safeParse(args)
  if (res.success) return res.data as unknown[]
  const issue = res.error.issues[0]
  const param = ['args', ...(issue?.path ?? []).map(String)].join('.')
  throw new MailerError('invalid_body', `${param}: ${issue?.message ?? 'invalid'}`, { param })
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)

/**
 * Maps a method's (checked) arguments onto the REST route it runs, exactly as the gateway would
 * hand that route its request: the send input or batch as the body, the email id as `:id`,
 * the list query as the query string.
 */
export function routePartsFor(method: MailerRpcMethodName, args: unknown[]): RouteParts {
  const none: RouteParts = { params: {}, query: {}, body: undefined, headers: {} }
  switch (method) {
    case 'send': {
      const [input, opts] = args as [unknown, { idempotencyKey?: string } | null | undefined]
      const key = opts?.idempotencyKey
      // `opts.idempotencyKey` is copied into the input and wins over the input's own key.
      const body = key !== undefined && isPlainObject(input) ? { ...input, idempotencyKey: key } : input
      return { ...none, body }
    }
    case 'sendBatch':
      return { ...none, body: args[0] }
    case 'list':
      return { ...none, query: (args[0] as Record<string, unknown> | null | undefined) ?? {} }
    case 'get':
    case 'cancel':
      return { ...none, params: { id: args[0] as string } }
  }
}
