export { closeWithin, DB_CLOSE_TIMEOUT_MS, DbWaits, settlesWithin } from './bounded-close.js'
export type { BusOptions } from './bus.js'
export { Bus } from './bus.js'
export { coalesceFlushes } from './coalesced-flush.js'
export { decodeJson, decodeReply, encodeError, encodeJson } from './codec.js'
export type { InvalidationHandlers } from './invalidations.js'
export type { OutboxMessage } from './outbox.js'
export { Outbox } from './outbox.js'
export { OUTBOX_ROWS_JSON, type OutboxRow, outboxCte, outboxRowsJson, outboxRowsOf } from './outbox-sql.js'
export { PROJECT_CACHE_TTL_MS, ProjectResolver, projectRef, projectResolver } from './project-resolver.js'
export { redeliveryDelayMs } from './redelivery-delay.js'
export { DEFAULT_REQUEST_TIMEOUT_MS, type RequestOptions } from './requests.js'
export type { Handler } from './responder.js'
export type { RouteHandler, ServeRoutesOptions } from './route-handlers.js'
export { routeHandler, serveRoutes } from './route-handlers.js'
export { guardRpc, rpcRequestId, serveAdminRpc } from './rpc-entry.js'
export type { Runtime } from './runtime.js'
export { shutdownPlan, startRuntime } from './runtime.js'
export type { ConsumeOptions, RunningConsumer, StreamDef } from './streams.js'
export {
  consume,
  DEFAULT_ACK_WAIT_SECONDS,
  ensureConsumer,
  ensureStream,
  heartbeatEveryMs,
  secondsToNanos,
} from './streams.js'
export { UnpublishableMessage } from './unpublishable.js'
export { Unreachable } from './unreachable.js'
