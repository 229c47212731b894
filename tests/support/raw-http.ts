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
