import { connect } from 'node:net'
import { type Gateway, start } from '@mailer/gateway/app'
import { loadEnv } from '@mailer/gateway/env'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rawExchange } from '../support/raw-http.js'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

/*
 * A request whose body stops arriving (a Content-Length larger than what is sent) waited for
 * Node's requestTimeout, 300 s, before its 408; headers that stall waited 60 s. Both now wait
 * REQUEST_READ_TIMEOUT_SECONDS (1 s here, 30 s by default), while a body that keeps coming, however
 * slowly in all, is read to the end.
 */
const { stack } = useStack(['auth', 'gateway'], { overrides: { REQUEST_READ_TIMEOUT_SECONDS: '1' } })
let port = 0

beforeAll(async () => {
  port = Number(new URL(stack.gatewayUrl).port)
})

/** Sends `head`, then each of `chunks` after `gapMs`; resolves with the raw answer once closed. */
function slowRequest(to: number, head: string, chunks: string[], gapMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(to, '127.0.0.1')
    const got: Buffer[] = []
    socket.on('data', (b) => got.push(b))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(got).toString('utf8')))
    socket.on('connect', () => {
      socket.write(head)
      let i = 0
      const timer = setInterval(() => {
        const chunk = chunks[i++]
        if (chunk === undefined) return clearInterval(timer)
        socket.write(chunk)
      }, gapMs)
    })
  })
}

// The bodies below are an authenticated caller's: only those are read (an unauthenticated one is
// refused from its headers, and its connection closed, without waiting for its body).
describe('a request that stops arriving', () => {
  it('a body shorter than its Content-Length is 408 request_timeout with its own request id', async () => {
    const r = await rawExchange(
      port,
      `POST /v1/admin/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n` +
        'X-Request-Id: rid-stalled\r\nContent-Type: application/json\r\n' +
        'Content-Length: 100\r\n\r\n{"slug":"stalled"',
    )
    expect(r.statusLine, r.raw).toBe('HTTP/1.1 408 Request Timeout')
    expect(r.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'x-request-id': 'rid-stalled',
      connection: 'close',
    })
    expect(JSON.parse(r.body)).toEqual({
      error: { type: 'validation_error', code: 'request_timeout', message: expect.stringContaining('1 s') },
    })
    expect(r.raw.match(/^HTTP\/1\.1 \d{3} /gm)).toHaveLength(1)
  })

  it('a chunked body that stops before its last chunk is 408 too', async () => {
    const r = await rawExchange(
      port,
      `POST /v1/admin/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n` +
        'Transfer-Encoding: chunked\r\n\r\n5\r\n{"to"\r\n',
    )
    expect(r.statusLine, r.raw).toBe('HTTP/1.1 408 Request Timeout')
    expect(JSON.parse(r.body).error.code).toBe('request_timeout')
  })

  it('headers that stop arriving are 408 request_timeout', async () => {
    const r = await rawExchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\nX-Half: ')
    expect(r.statusLine, r.raw).toBe('HTTP/1.1 408 Request Timeout')
    expect(JSON.parse(r.body).error.code).toBe('request_timeout')
  })
})

describe('a request that keeps arriving', () => {
  // A gateway of its own with a 3 s limit. At 1 s, the one above, the pieces had to land 400 ms
  // apart in a process that also runs the gateway, and an event loop stalled for 600 ms (a
  // loaded machine) held back the next piece and the gateway's read of it alike: the body was
  // cut. Pieces 250 ms apart against 3 s leave two seconds of such stalls.
  let slow: Gateway | undefined
  beforeAll(async () => {
    slow = await start(loadEnv(stack.env({ REQUEST_READ_TIMEOUT_SECONDS: '3' })))
  })
  afterAll(async () => {
    await slow?.stop()
  })

  it('a body that keeps coming is read whole, however long it takes in all', async () => {
    // 26 pieces 250 ms apart: over 6 s in all, never a second without a byte. A limit on the whole
    // request (Node checks one every 1.5 s with this setting) or an idle time counted from the
    // request's start cuts it by 4.5 s, before its last pieces.
    const body = JSON.stringify({ slug: 'slow-upload', name: `Slow ${'.'.repeat(170)}` })
    const pieces = body.match(/.{1,8}/g) ?? []
    const began = Date.now()
    const raw = await slowRequest(
      slow!.port,
      `POST /v1/admin/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      pieces,
      250,
    )
    expect(pieces.length).toBeGreaterThanOrEqual(26)
    expect(Date.now() - began).toBeGreaterThan(6_000)
    expect(raw).toMatch(/^HTTP\/1\.1 201 Created\r\n/)
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ slug: 'slow-upload' })
  })
})
