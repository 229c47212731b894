import { beforeAll, describe, expect, it } from 'vitest'
import { api } from '../support/http.js'
import { type RawResponse, rawExchange } from '../support/raw-http.js'
import { useStack } from '../support/use-stack.js'

// What Node's HTTP server refuses before express sees a request. Node answered these by itself
// with a bare status line, no body and no X-Request-Id, which no SDK can read as an API error.

const { stack } = useStack(['gateway'])
let port = 0

beforeAll(() => {
  port = Number(new URL(stack.gatewayUrl).port)
})

/** The contract's error body, nothing else, with the headers every answer carries. */
function expectContractError(r: RawResponse, status: number, code: string): void {
  expect(r.status, r.raw).toBe(status)
  expect(r.statusLine).toMatch(new RegExp(`^HTTP/1\\.1 ${status} \\S`))
  expect(r.headers['content-type']).toBe('application/json; charset=utf-8')
  expect(r.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/)
  expect(r.headers.connection).toBe('close')
  expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.body))
  const body = JSON.parse(r.body)
  expect(body).toEqual({ error: { type: 'validation_error', code, message: expect.any(String) } })
  expect(body.error.message).not.toBe('')
}

describe('requests Node refuses before any route', () => {
  it('a garbage request line is 400 invalid_request in JSON with X-Request-Id', async () => {
    const r = await rawExchange(port, 'HELLO THERE\r\n\r\n')
    expectContractError(r, 400, 'invalid_request')
  })

  it('a header that does not parse is 400 invalid_request', async () => {
    const r = await rawExchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n')
    expectContractError(r, 400, 'invalid_request')
  })

  it("headers over Node's limit are 431 headers_too_large; the header's value is not echoed", async () => {
    const secret = `s3cr3t-${'x'.repeat(20_000)}`
    const r = await rawExchange(
      port,
      `GET /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\n\r\n`,
    )
    expectContractError(r, 431, 'headers_too_large')
    expect(r.raw).not.toContain('s3cr3t')
  })

  it('a HEAD request gets the same 400 or 431 with its headers and no body', async () => {
    // The JSON body came after the headers all the same: a client reads none after a HEAD answer.
    const bad = await rawExchange(port, 'HEAD /health HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n')
    expect(bad.statusLine, bad.raw).toBe('HTTP/1.1 400 Bad Request')
    expect(bad.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(bad.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/)
    expect(bad.headers.connection).toBe('close')
    expect(bad.body).toBe('')
    const get = await rawExchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n')
    // The length of the body a GET gets, as a HEAD answer may say (RFC 9110 9.3.2).
    expect(bad.headers['content-length']).toBe(get.headers['content-length'])
    expect(get.body).not.toBe('')
    const big = await rawExchange(
      port,
      `HEAD /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'x'.repeat(20_000)}\r\n\r\n`,
    )
    expect(big.statusLine, big.raw).toBe('HTTP/1.1 431 Request Header Fields Too Large')
    expect(big.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(big.body).toBe('')
  })

  it('an Expect other than 100-continue is 417 expectation_failed in JSON with its request id; the connection goes on', async () => {
    // Node answered it with a bare 417 and no body, before express: nothing an SDK could read.
    const r = await rawExchange(
      port,
      'POST /v1/emails HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nX-Request-Id: rid-417\r\nContent-Length: 2\r\n\r\n{}' +
        'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    )
    expect(r.statusLine, r.raw).toBe('HTTP/1.1 417 Expectation Failed')
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(r.headers['x-request-id']).toBe('rid-417')
    const body = r.body.slice(0, Number(r.headers['content-length']))
    expect(JSON.parse(body)).toEqual({
      error: { type: 'validation_error', code: 'expectation_failed', message: expect.any(String) },
    })
    // The body was read and dropped: the next request on the connection is answered.
    expect(r.body.slice(body.length)).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort('gateway')}/metrics`)).text()
    expect(text).toMatch(
      /mailer_gateway_http_requests_total\{route="unparsed",method="unknown",status="417"\} 1/,
    )
  })

  it('counts them as requests answered (route "unparsed") and keeps serving', async () => {
    await rawExchange(port, 'HELLO THERE\r\n\r\n')
    const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort('gateway')}/metrics`)).text()
    expect(text).toMatch(
      /mailer_gateway_http_requests_total\{route="unparsed",method="unknown",status="400"\} [1-9]/,
    )
    expect(text).toMatch(
      /mailer_gateway_http_requests_total\{route="unparsed",method="unknown",status="431"\} [1-9]/,
    )
    const health = await api(stack.gatewayUrl).get('/health')
    expect(health.status).toBe(200)
  })
})
