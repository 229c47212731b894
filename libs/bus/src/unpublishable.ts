/**
 * A message larger than the NATS server's max_payload: no retry can publish it until the operator
 * raises the limit (docs/operations.md), so callers that retry skip it instead of waiting on it.
 */
export class UnpublishableMessage extends Error {
  constructor(
    readonly subject: string,
    readonly msgId: string,
    readonly bytes: number,
    readonly maxPayload: number,
  ) {
    super(`message ${msgId} on ${subject} is ${bytes} bytes, over NATS max_payload (${maxPayload})`)
  }
}
