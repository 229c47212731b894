/**
 * What each SDK method sends and answers, by operation, read from the methods' own signatures:
 * `body` and `query` as the method puts them on the wire (a method taking one field makes the
 * body around it), `result` what its promise resolves to. No `body` (or `query`): the method
 * sends none. contract-types.ts holds every entry to the route's schemas (operation-schemas.ts).
 */
import type { AdminClient, MailerClient, MailerRpcClient } from '../src/index.js'

type Fn = (...args: any[]) => Promise<unknown>
/** An argument as given (a defaulted or optional one without its `undefined`). */
type Arg<F extends Fn, I extends number> = Exclude<Parameters<F>[I], undefined>
type Result<F extends Fn> = Awaited<ReturnType<F>>

type M = MailerClient
type A = AdminClient

/** A call without body or query. */
type Plain<F extends Fn> = { result: Result<F> }
/** The body is the argument at `I`. */
type WithBody<F extends Fn, I extends number> = { body: Arg<F, I>; result: Result<F> }
/** The query is the argument at `I`. */
type WithQuery<F extends Fn, I extends number> = { query: Arg<F, I>; result: Result<F> }

export interface SdkOperations {
  me: Plain<M['me']>
  'apiKeys.list': Plain<M['apiKeys']['list']>
  // The general overload (the last) answers a dry run's result too.
  'emails.send': {
    body: Arg<M['emails']['send'], 0>
    query: Pick<Arg<M['emails']['send'], 1>, 'dryRun'>
    result: Result<M['emails']['send']>
  }
  'emails.sendBatch': {
    body: Arg<M['emails']['sendBatch'], 0>
    query: Pick<Arg<M['emails']['sendBatch'], 1>, 'dryRun'>
    result: Result<M['emails']['sendBatch']>
  }
  'emails.list': WithQuery<M['emails']['list'], 0>
  'emails.get': Plain<M['emails']['get']>
  'emails.content': Plain<M['emails']['content']>
  'emails.cancel': Plain<M['emails']['cancel']>
  // A Date is sent as its ISO string.
  'emails.reschedule': {
    body: { scheduledAt: Exclude<Arg<M['emails']['reschedule'], 1>, Date> }
    result: Result<M['emails']['reschedule']>
  }
  'events.list': WithQuery<M['events']['list'], 0>
  'analytics.get': WithQuery<M['analytics']['get'], 0>
  'domains.list': WithQuery<M['domains']['list'], 0>
  'webhooks.create': WithBody<M['webhooks']['create'], 0>
  'webhooks.list': Plain<M['webhooks']['list']>
  'webhooks.get': Plain<M['webhooks']['get']>
  'webhooks.update': WithBody<M['webhooks']['update'], 1>
  'webhooks.delete': Plain<M['webhooks']['delete']>
  'webhooks.rotateSecret': Plain<M['webhooks']['rotateSecret']>
  'webhooks.deliveries': WithQuery<M['webhooks']['deliveries'], 1>
  'webhooks.test': Plain<M['webhooks']['test']>
  'webhooks.retryDelivery': Plain<M['webhooks']['retryDelivery']>
  'templates.list': WithQuery<M['templates']['list'], 0>
  'templates.create': WithBody<M['templates']['create'], 0>
  'templates.get': Plain<M['templates']['get']>
  'templates.update': WithBody<M['templates']['update'], 1>
  'templates.delete': Plain<M['templates']['delete']>
  'templates.versions': WithQuery<M['templates']['versions'], 1>
  'templates.restore': {
    body: { version: Arg<M['templates']['restore'], 1> }
    result: Result<M['templates']['restore']>
  }
  // `data` defaults to {}: it is always sent.
  'templates.render': {
    body: { data?: Arg<M['templates']['render'], 1> }
    result: Result<M['templates']['render']>
  }
  'contacts.list': WithQuery<M['contacts']['list'], 0>
  'contacts.create': WithBody<M['contacts']['create'], 0>
  'contacts.import': {
    body: Arg<M['contacts']['import'], 0>
    query: Arg<M['contacts']['import'], 1>
    result: Result<M['contacts']['import']>
  }
  'contacts.get': Plain<M['contacts']['get']>
  'contacts.update': WithBody<M['contacts']['update'], 1>
  'contacts.delete': Plain<M['contacts']['delete']>
  'audiences.list': WithQuery<M['audiences']['list'], 0>
  'audiences.create': WithBody<M['audiences']['create'], 0>
  'audiences.get': Plain<M['audiences']['get']>
  'audiences.update': WithBody<M['audiences']['update'], 1>
  'audiences.delete': Plain<M['audiences']['delete']>
  'audiences.listContacts': WithQuery<M['audiences']['listContacts'], 1>
  'audiences.addContacts': {
    body: { contactIds: Arg<M['audiences']['addContacts'], 1> }
    result: Result<M['audiences']['addContacts']>
  }
  'audiences.removeContacts': {
    body: { contactIds: Arg<M['audiences']['removeContacts'], 1> }
    result: Result<M['audiences']['removeContacts']>
  }
  'broadcasts.list': WithQuery<M['broadcasts']['list'], 0>
  'broadcasts.create': WithBody<M['broadcasts']['create'], 0>
  'broadcasts.get': Plain<M['broadcasts']['get']>
  'broadcasts.update': WithBody<M['broadcasts']['update'], 1>
  'broadcasts.delete': Plain<M['broadcasts']['delete']>
  'broadcasts.send': WithBody<M['broadcasts']['send'], 1>
  'broadcasts.cancel': Plain<M['broadcasts']['cancel']>
  'admin.projects.create': WithBody<A['projects']['create'], 0>
  'admin.projects.list': Plain<A['projects']['list']>
  'admin.projects.get': Plain<A['projects']['get']>
  'admin.projects.update': WithBody<A['projects']['update'], 1>
  'admin.projects.disable': Plain<A['projects']['disable']>
  'admin.apiKeys.create': WithBody<A['apiKeys']['create'], 1>
  'admin.apiKeys.list': {
    query: { project: Arg<A['apiKeys']['list'], 0> }
    result: Result<A['apiKeys']['list']>
  }
  'admin.apiKeys.rename': {
    body: { name: Arg<A['apiKeys']['rename'], 1> }
    result: Result<A['apiKeys']['rename']>
  }
  'admin.apiKeys.revoke': Plain<A['apiKeys']['revoke']>
  'admin.domains.list': Plain<A['domains']['list']>
  'admin.domains.setup': Plain<A['domains']['setup']>
  'admin.suppressions.list': WithQuery<A['suppressions']['list'], 0>
  'admin.suppressions.add': WithBody<A['suppressions']['add'], 0>
  'admin.suppressions.remove': Plain<A['suppressions']['remove']>
  'admin.emails.list': WithQuery<A['emails']['list'], 0>
  'admin.emails.get': Plain<A['emails']['get']>
  'admin.emails.content': Plain<A['emails']['content']>
  'admin.emails.resend': Plain<A['emails']['resend']>
  'admin.events.list': WithQuery<A['events']['list'], 0>
  'admin.analytics.get': WithQuery<A['analytics']['get'], 0>
  'admin.stats': Plain<A['stats']>
  'admin.dev.createEvent': WithBody<A['dev']['createEvent'], 0>
}

type R = MailerRpcClient

/**
 * MailerRpc's methods by the route whose code each runs (libs/contracts/src/rpc.ts): `body` is
 * the input, `query` the list query (sent as JSON: a Date as its ISO string), `result` the reply.
 */
export interface RpcOperations {
  'emails.send': WithBody<R['send'], 0>
  'emails.sendBatch': WithBody<R['sendBatch'], 0>
  'emails.get': Plain<R['get']>
  'emails.list': WithQuery<R['list'], 0>
  'emails.cancel': Plain<R['cancel']>
}
