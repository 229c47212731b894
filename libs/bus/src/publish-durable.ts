import { headers, type PubAck } from 'nats'
import { decodeJson } from './codec.js'
import type { ReplyInbox } from './reply-inbox.js'
import { UnpublishableMessage } from './unpublishable.js'

/** The headers block of a publish carrying only `Nats-Msg-Id`, as the client encodes it. */
const msgIdHeaderBytes = (msgId: string): number =>
  Buffer.byteLength(`NATS/1.0\r\nNats-Msg-Id: ${msgId}\r\n\r\n`)

/**
 * What `js.publish` does, through the connection's shared inbox (`Bus.publishDurable`): a
 * publish with `Nats-Msg-Id`, answered by the stream's acknowledgement or its refusal.
 */
export async function publishDurable(
  inbox: ReplyInbox,
  subject: string,
  data: Uint8Array,
  msgId: string,
  opts: { timeoutMs: number; maxPayload: number },
): Promise<PubAck> {
  // The server's limit holds the headers too: over it with them, the client refuses the publish
  // with its own error, which the sweeper would retry for ever.
  const bytes = data.length + msgIdHeaderBytes(msgId)
  if (bytes > opts.maxPayload) throw new UnpublishableMessage(subject, msgId, bytes, opts.maxPayload)
  const h = headers()
  h.set('Nats-Msg-Id', msgId)
  const reply = await inbox.request(subject, data, { timeoutMs: opts.timeoutMs, headers: h })
  const ack = decodeJson(reply.data) as Partial<PubAck> & {
    error?: { code?: number; description?: string }
  }
  if (ack.error)
    throw new Error(`JetStream refused the message on ${subject}: ${ack.error.description ?? ack.error.code}`)
  if (!ack.stream) throw new Error(`JetStream answered ${subject} without a stream`)
  return {
    stream: ack.stream,
    seq: ack.seq ?? 0,
    duplicate: ack.duplicate ?? false,
    domain: ack.domain ?? '',
  }
}
