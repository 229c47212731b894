export { AdminClient, type AdminClientOptions, AdminProjectClient } from './admin.js'
export { type ClientOptions, MailerClient, ProjectResources } from './client.js'
export { ENDPOINTS, KEYED_OPERATIONS, type Operation, PENDING_ENDPOINTS } from './endpoints.js'
export { isMailerApiError, MailerApiError, MailerConnectionError, type MailerErrorFields } from './errors.js'
export {
  type BatchOptions,
  type DryRunSendOptions,
  generateIdempotencyKey,
  type SendOptions,
} from './resources/emails.js'
export { MAX_RETRY_AFTER_SECONDS, parseRetryAfter, retryDelayMs } from './retry.js'
export {
  AdminRpcClient,
  type AdminRpcRequest,
  decodeRpcReply,
  decodeServiceError,
  MailerRpcClient,
  type NatsHeaders,
  type NatsRequester,
  type RpcCallOptions,
  type RpcOptions,
  SERVICE_ERROR_PREFIX,
} from './rpc.js'
export { paginate } from './scope.js'
export type { Query, RequestOptions, RetryInfo, TransportOptions } from './transport.js'
export type * from './types/admin.js'
export type * from './types/common.js'
export type * from './types/emails.js'
export type * from './types/marketing.js'
export type * from './types/webhooks.js'
export {
  DEFAULT_TOLERANCE_SECONDS,
  type HeaderSource,
  parseSignatureHeader,
  SIGNATURE_HEADER,
  signWebhookPayload,
  type VerifyOptions,
  verifyWebhook,
  WebhookVerificationError,
  type WebhookVerificationFailure,
} from './verify-webhook.js'
