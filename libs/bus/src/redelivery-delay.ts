import type { JsMsg } from 'nats'

/**
 * How long a consumer asks JetStream to wait before redelivering a message it could not handle
 * (`msg.nak(redeliveryDelayMs(msg))`): 1 s after the first failure, then 2 s, 4 s … capped at
 * 60 s, so an outage is not hammered while a passing failure is retried soon.
 */
export const redeliveryDelayMs = (msg: JsMsg): number =>
  Math.min(60_000, 1_000 * 2 ** Math.min(6, Math.max(0, msg.info.redeliveryCount - 1)))
