import { MailerError } from '@mailer/contracts'

/**
 * What a reply leaves for the JSON around the parts measured here (`{"data":[…],"nextCursor":…}`,
 * the commas between items): a reply over the NATS server's max_payload cannot be sent at all,
 * and its request ends as a 500 however often it is repeated.
 */
export const REPLY_ENVELOPE_BYTES = 1024

/** The bytes of `value` as it crosses the bus (JSON, UTF-8). */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8')

/** The most bytes of content one reply can carry with `maxPayload` (the bus's max_payload). */
export const replyRoom = (maxPayload: number): number => Math.max(0, maxPayload - REPLY_ENVELOPE_BYTES)

/**
 * A render preview over what one reply can carry is 400 `payload_too_large`, `param` the part
 * that crossed it (as a send of that content over MAX_MESSAGE_BYTES is): the NATS server's
 * max_payload (1 MiB unless raised) can be below MAX_MESSAGE_BYTES.
 */
export function checkPreviewReply(
  preview: { subject: string | null; html: string | null; text: string | null },
  maxPayload: number,
): void {
  const room = replyRoom(maxPayload)
  let total = 0
  for (const part of ['subject', 'html', 'text'] as const) {
    total += jsonBytes(preview[part])
    if (total > room)
      throw new MailerError(
        'payload_too_large',
        `The rendered template is larger than this deployment's message limit (NATS max_payload, ${maxPayload} bytes)`,
        { param: part, status: 400 },
      )
  }
}

/**
 * How many of `items` (in order) fit `room` bytes of JSON together: at least one, so a page always
 * moves on (a single item larger than that is a reply the bus cannot carry either way).
 */
export function fittingCount(items: readonly unknown[], room: number): number {
  let total = 0
  for (let i = 0; i < items.length; i++) {
    total += jsonBytes(items[i]) + 1
    if (total > room) return Math.max(1, i)
  }
  return items.length
}
