import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { connect } from 'node:net'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { rawExchange } from '../../../../tests/support/raw-http.js'
import { answerClientErrors, clientErrorFor } from './client-errors.js'

describe('clientErrorFor', () => {
  it("maps Node's refusals to the contract's codes; the type follows the status", () => {
    const cases: [string, number, string][] = [
      ['HPE_INVALID_METHOD', 400, 'invalid_request'],
      ['HPE_INVALID_HEADER_TOKEN', 400, 'invalid_request'],
      ['HPE_INVALID_EOF_STATE', 400, 'invalid_request'],
      ['HPE_HEADER_OVERFLOW', 431, 'headers_too_large'],
      ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 413, 'payload_too_large'],
      ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'request_timeout'],
    ]
    for (const [code, status, ours] of cases)
      expect(clientErrorFor(code), code).toMatchObject({ status, code: ours, type: 'validation_error' })
  })

  it('socket errors get no answer', () => {
    for (const code of ['ECONNRESET', 'EPIPE', 'ETIMEDOUT', undefined])
      expect(clientErrorFor(code)).toBeNull()
  })
})

// A real HTTP server with Node's time-outs made short (the gateway's are in app.ts).
describe('answerClientErrors on a real server', () => {
  let server: Server
  let logs: string[]
  let counted: number[]
  let seen: string[]

  async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> {
    logs = []
    counted = []
    seen = []
    server = createServer(
      { headersTimeout: 300, requestTimeout: 600, connectionsCheckingInterval: 50 },
      handler,
    )
    const logger = pino({ level: 'debug' }, { write: (line: string) => logs.push(line) })
    answerClientErrors(server, { logger, count: (s) => counted.push(s) })
    server.on('clientError', (err: NodeJS.ErrnoException) => seen.push(err.code ?? ''))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return (server.address() as AddressInfo).port
  }
  afterEach(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it('headers that stall past headersTimeout get a 408 request_timeout in JSON', async () => {
    const port = await listen((_req, res) => res.end('never'))
    const r = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cr3t')
    expect(r.statusLine).toBe('HTTP/1.1 408 Request Timeout')
    expect(r.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      connection: 'close',
    })
    expect(r.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/)
    expect(JSON.parse(r.body)).toEqual({
      error: { type: 'validation_error', code: 'request_timeout', message: expect.any(String) },
    })
    expect(counted).toEqual([408])
    expect(logs.join('')).toContain('ERR_HTTP_REQUEST_TIMEOUT')
    expect(logs.join('')).not.toContain('s3cr3t')
  })

  it("a body that stalls past requestTimeout gets one 408 with the request's own id", async () => {
    const port = await listen((req, res) => {
      res.setHeader('X-Request-Id', 'req_given')
      req.on('end', () => res.end('late'))
      req.resume()
    })
    const r = await rawExchange(port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{"a"')
    expect(r.statusLine).toBe('HTTP/1.1 408 Request Timeout')
    expect(r.headers['x-request-id']).toBe('req_given')
    expect(JSON.parse(r.body).error.code).toBe('request_timeout')
    expect(r.raw.match(/^HTTP\/1\.1 \d{3} /gm)).toHaveLength(1)
  })

  it('a client that keeps sending and never closes gets one answer, then the server closes', async () => {
    const port = await listen((_req, res) => res.end('ok'))
    const closed = new Promise<void>((resolve) =>
      server.once('connection', (s: Socket) => s.once('close', () => resolve())),
    )
    const client = connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    const got: Buffer[] = []
    client.on('data', (b) => {
      got.push(b)
      client.write('MORE GARBAGE\r\n')
    })
    client.on('error', () => undefined)
    client.write('HELLO THERE\r\n\r\n')
    // The client keeps its side open; the server's side closes once it has lingered.
    await closed
    client.destroy()
    const raw = Buffer.concat(got).toString()
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
    expect(raw.match(/^HTTP\/1\.1 \d{3} /gm)).toHaveLength(1)
    expect(counted).toEqual([400])
    // The parser reported the later bytes too, and they were not answered.
    expect(seen.length).toBeGreaterThan(1)
  })

  it('a connection reset mid-request is closed without a write, a count or a crash', async () => {
    // The request waits for its body, as express.raw does: nothing is answered before the reset.
    let started: () => void = () => undefined
    const inProgress = new Promise<void>((resolve) => {
      started = resolve
    })
    const port = await listen((req, res) => {
      started()
      req.on('end', () => res.end('ok'))
      req.resume()
    })
    const closed = new Promise<Socket>((resolve) =>
      server.once('connection', (s: Socket) => s.once('close', () => resolve(s))),
    )
    const client = connect(port, '127.0.0.1')
    client.on('error', () => undefined)
    client.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n')
    await inProgress
    client.resetAndDestroy()
    const serverSide = await closed
    expect(seen).toEqual(['ECONNRESET'])
    expect(serverSide.bytesWritten).toBe(0)
    expect(counted).toEqual([])
    expect(logs).toEqual([])
  })
})
