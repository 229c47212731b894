import { connect } from 'node:net'

export interface RawResponse {
  /** The status line, as `HTTP/1.1 431 Request Header Fields Too Large`. */
  statusLine: string
  status: number
  /** Header names lowercased. */
  headers: Record<string, string>
  /** Everything after the blank line (a JSON body, when the server sent one). */
  body: string
  /** Every byte the server sent before it closed the connection. */
  raw: string
}

/**
 * Writes `request` to a new TCP connection, as is (an unfinished request stays so), and resolves
 * with what the server sent once it closes the connection. For requests fetch cannot send: a
 * garbage request line, headers over Node's limit, a request that stalls.
 */
export function rawExchange(port: number, request: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const got: Buffer[] = []
    socket.on('data', (b) => got.push(b))
    // The server may close while we still write (it refused early): its answer is what counts.
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err)
    })
    socket.on('close', () => resolve(parseResponse(Buffer.concat(got).toString('utf8'))))
    socket.on('connect', () => socket.write(request))
  })
}

function parseResponse(raw: string): RawResponse {
  const split = raw.indexOf('\r\n\r\n')
  const head = split < 0 ? raw : raw.slice(0, split)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const l of lines) {
    const colon = l.indexOf(':')
    if (colon > 0) headers[l.slice(0, colon).trim().toLowerCase()] = l.slice(colon + 1).trim()
  }
  const status = Number(statusLine.split(' ')[1] ?? 0)
  return { statusLine, status, headers, body: split < 0 ? '' : raw.slice(split + 4), raw }
}

/** A TCP connection written in steps, for exchanges where what is sent depends on what came back. */
export interface RawConversation {
  write(data: string | Buffer): Promise<void>
  /** Resolves with everything received so far once `done` holds for it (or the server closed). */
  until(done: (received: string) => boolean): Promise<string>
  /** Resolves once the server has closed the connection, with everything it sent. */
  closed: Promise<string>
  end(): void
}

export function rawConversation(port: number): Promise<RawConversation> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    let isClosed = false
    const waiters = new Set<() => void>()
    const wake = () => {
      for (const w of waiters) w()
    }
    socket.on('data', (b) => {
      received += b.toString('latin1')
      wake()
    })
    // A server that refused early may close while we still write: its answer is what counts.
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err)
    })
    const closed = new Promise<string>((r) =>
      socket.on('close', () => {
        isClosed = true
        wake()
        r(received)
      }),
    )
    const conversation: RawConversation = {
      write: (data) =>
        new Promise((r) => {
          if (socket.destroyed || !socket.writable) return r()
          socket.write(data, () => r())
        }),
      until: (done) =>
        new Promise((r) => {
          const check = () => {
            if (!done(received) && !isClosed) return
            waiters.delete(check)
            r(received)
          }
          waiters.add(check)
          check()
        }),
      closed,
      end: () => socket.end(),
    }
    socket.on('connect', () => resolve(conversation))
  })
}

/** Whether `raw` holds a whole answer after `skip` bytes: its headers and Content-Length bytes. */
export function hasWholeAnswer(raw: string, skip = 0): boolean {
  const rest = raw.slice(skip)
  const split = rest.indexOf('\r\n\r\n')
  if (split < 0) return false
  const length = /\r\ncontent-length: *(\d+)/i.exec(rest.slice(0, split))
  return rest.length >= split + 4 + Number(length?.[1] ?? 0)
}

export { parseResponse }
