import type { Socket } from 'node:net'

/**
 * Bytes an interim answer's head may take: past it the bytes go to undici as they are (which then
 * fails the attempt, as it did before), rather than being held without end.
 */
const MAX_INTERIM_HEAD = 16 * 1024

const CONTINUE_LINE = /^HTTP\/1\.[01] 100(?: [^\r\n]*)?\r?$/

const END_OF_HEAD = /\r?\n\r?\n/

/** Whether `text`, a status line's start, may still become a 100's. */
const mayBeContinue = (text: string) =>
  ['HTTP/1.1 100', 'HTTP/1.0 100'].some((line) => line.startsWith(text.slice(0, line.length)))

/**
 * What is left of `buf` once the `100 Continue` answers at its start are removed, and whether
 * their end is still to come (`wait`: keep the bytes until more arrive), or the final answer has
 * started (`done`).
 */
function strip(buf: Buffer): { rest: Buffer; state: 'wait' | 'done' } {
  let rest = buf
  for (;;) {
    // Every answer passes here: most are told apart by their first 12 bytes alone.
    if (!mayBeContinue(rest.toString('latin1', 0, 12))) return { rest, state: 'done' }
    // Latin-1 maps each byte to one character, so string offsets are byte offsets.
    const text = rest.toString('latin1', 0, Math.min(rest.length, MAX_INTERIM_HEAD))
    const eol = text.indexOf('\n')
    if (eol < 0) return { rest, state: rest.length < MAX_INTERIM_HEAD ? 'wait' : 'done' }
    if (!CONTINUE_LINE.test(text.slice(0, eol))) return { rest, state: 'done' }
    const end = END_OF_HEAD.exec(text)
    if (!end) return { rest, state: rest.length < MAX_INTERIM_HEAD ? 'wait' : 'done' }
    rest = rest.subarray(end.index + end[0].length)
    if (rest.length === 0) return { rest, state: 'wait' }
  }
}

/**
 * Removes the interim `100 Continue` answers a receiver sends before its answer from what the
 * connection reads, so that undici's HTTP/1.1 parser sees the final answer only. That parser
 * destroys the connection on a 100 ('bad response', UND_ERR_SOCKET): it never sends `Expect:
 * 100-continue`, so it takes one for a broken server. Yet some servers and proxies send it
 * unasked, and HTTP allows it (RFC 9110 section 15.2: a client must accept any 1xx before the
 * final answer); Node's own HTTP client skips it. The attempt was recorded as a connection error
 * although the receiver had answered 200, and retried.
 *
 * Only the start of an answer is looked at: undici sends a request on a connection only once the
 * answer before it has been read to its end (no pipelining), so the bytes that arrive after a
 * request is written begin an answer. undici reads a connection through `read()` on 'readable'
 * and writes through `write()`; both are wrapped on this one socket. Other 1xx answers (102,
 * 103) pass: undici skips those itself. A 100's head held in part waits for the rest of it.
 */
export function skipUnaskedContinue(socket: Socket): void {
  let atStart = false
  let held: Buffer | null = null
  const write = socket.write
  socket.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
    atStart = true
    return write.apply(this, args as never)
  } as Socket['write']
  const read = socket.read
  socket.read = function (this: Socket, size?: number) {
    // `read(0)` is the stream's own call to fill its buffer (it returns nothing to keep); undici
    // calls `read()` alone.
    while (atStart && size === undefined) {
      const chunk = read.call(this) as Buffer | null
      if (chunk === null) return null
      const { rest, state } = strip(held ? Buffer.concat([held, chunk]) : chunk)
      if (state === 'wait') {
        held = rest.length > 0 ? rest : null
        continue
      }
      atStart = false
      held = null
      return rest
    }
    return read.call(this, size)
  }
}
