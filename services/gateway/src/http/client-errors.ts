import {
  type IncomingMessage,
  maxHeaderSize,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http'
import type { Duplex } from 'node:stream'
import { MailerError, newRequestId, requestIdFor } from '@mailer/contracts'
import type { Logger } from '@mailer/observability'

/**
 * How long an answered connection waits for the client to close its side before it is destroyed.
 * Closing at once, with request bytes still unread, makes the kernel send a reset that can wipe
 * the answer from the client's buffer before it reads it; waiting forever would let a client hold
 * the socket open.
 */
const LINGER_MS = 2_000

/**
 * The contract's error for what Node's HTTP server refuses by itself: a request line or header
 * its parser rejects, headers over its limit, a request slower than its time-outs. Null for a
 * socket error (ECONNRESET, EPIPE, ...): the peer is gone or the stream is broken, nothing to say.
 */
export function clientErrorFor(code: string | undefined): MailerError | null {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new MailerError(
        'headers_too_large',
        `The request line and headers are larger than ${maxHeaderSize} bytes`,
      )
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new MailerError('payload_too_large', 'The chunk extensions of the request body are too large')
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new MailerError('request_timeout', 'The request was not received in time')
  }
  if (code?.startsWith('HPE_'))
    return new MailerError('invalid_request', 'The request could not be parsed as HTTP/1.1')
  return null
}

/**
 * A whole HTTP/1.1 response carrying the contract's error body, closing the connection. A HEAD
 * request gets the same status and headers and no body (RFC 9110 9.3.2): a client reads none after
 * a HEAD answer, so those bytes were left over as garbage where the next answer should start.
 */
export function clientErrorResponse(e: MailerError, requestId: string, head = false): string {
  const body = JSON.stringify({ error: { type: e.type, code: e.code, message: e.message } })
  return [
    `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status] ?? ''}`,
    `Date: ${new Date().toUTCString()}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    head ? '' : body,
  ].join('\r\n')
}

/** Answers a request on its socket in the contract's body, outside express (answerClientErrors). */
export type Refuse = (socket: Duplex, e: MailerError, code: string) => void

/**
 * Answers Node's `clientError`s in JSON. Without a listener Node writes a bare `400`, `408` or
 * `431` with no body and no X-Request-Id, which SDKs cannot read as an API error. The answer goes
 * only where Node's own would (the socket writable, no response of an in-flight request begun);
 * otherwise, and on any socket error, the socket is just destroyed. Nothing of the request is
 * logged (`err.rawPacket` holds its header values): only the parser's code. Returns the same
 * answer for the gateway's own refusal of a request in flight (a body that stopped arriving).
 */
export function answerClientErrors(
  server: Server,
  opts: { logger: Logger; count: (status: number) => void },
): Refuse {
  const answered = new WeakSet<Duplex>()
  const refuse = (socket: Duplex, e: MailerError | null, code: string | undefined, rawPacket?: Buffer) => {
    // The parser reports again on bytes that arrive after its error: answered once, and the
    // linger timer below closes the socket.
    if (answered.has(socket)) return
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage
    if (!e || !socket.writable || inFlight?.headersSent) {
      socket.destroy()
      return
    }
    answered.add(socket)
    // A body that stalls belongs to a request express already gave an id: keep it for the logs.
    const given = inFlight?.getHeader('x-request-id')
    const requestId = typeof given === 'string' ? given : newRequestId()
    const head = inFlight?.req ? inFlight.req.method === 'HEAD' : startsHeadRequest(rawPacket)
    opts.logger.debug({ requestId, code, status: e.status }, 'request refused by the HTTP server')
    opts.count(e.status)
    socket.end(clientErrorResponse(e, requestId, head))
    const linger = setTimeout(() => socket.destroy(), LINGER_MS)
    linger.unref()
    socket.once('close', () => clearTimeout(linger))
  }
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) =>
    refuse(socket, clientErrorFor(err.code), err.code, err.rawPacket),
  )
  return refuse
}

/**
 * Whether the bytes the parser failed on begin a HEAD request (blank lines before a request line
 * are allowed). Node gives only the chunk it was reading: headers that overflow in a later chunk
 * than their request line's cannot be told apart and are answered with the body.
 */
function startsHeadRequest(rawPacket: Buffer | undefined): boolean {
  if (!rawPacket) return false
  return /^(?:\r?\n)*HEAD /.test(rawPacket.subarray(0, 64).toString('latin1'))
}

/**
 * An `Expect` other than `100-continue`: Node answered it by itself with a bare 417 and no body
 * before express saw the request, so an SDK could not read it as an API error. The same 417, in
 * the contract's body, with the request's id; the header's value is not echoed. Node reads and
 * drops the body, as after any answer, so the connection stays usable.
 */
export function answerExpectations(
  server: Server,
  opts: { logger: Logger; count: (status: number) => void },
): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const e = new MailerError('expectation_failed', 'Expect is only understood as 100-continue')
    const requestId = requestIdFor(req.headers['x-request-id'] as string | undefined)
    opts.logger.debug({ requestId, status: e.status }, 'request refused: unknown expectation')
    opts.count(e.status)
    const body = JSON.stringify({ error: { type: e.type, code: e.code, message: e.message } })
    res.writeHead(e.status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'X-Request-Id': requestId,
    })
    res.end(body)
  })
}
