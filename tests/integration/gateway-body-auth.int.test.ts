import { Links } from '@mailer/links'
import { beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { hasWholeAnswer, parseResponse, rawConversation } from '../support/raw-http.js'
import { useStack } from '../support/use-stack.js'

// A body is read only once its caller is authenticated. It was read (up to MAX_BODY_BYTES, 16 MiB)
// before any route looked at the key, and Node answered `Expect: 100-continue` by itself: anyone
// could make the gateway hold 16 MiB per request. A short read time-out makes the old behaviour
// (waiting for the whole body of a refused caller) show as a 408 rather than as a hung test.
const MAX_BODY_BYTES = 16 * 1024 * 1024
const TRACKING_SECRET = 'body-auth-secret-for-tests-0123456789'
const { client, stack } = useStack(['auth', 'email', 'broadcast', 'gateway'], {
  env: { MAX_BODY_BYTES: String(MAX_BODY_BYTES), REQUEST_READ_TIMEOUT_SECONDS: '5', TRACKING_SECRET },
})
/** A one-click unsubscribe path the gateway takes (signed with its secret). */
const unsubscribePath = () =>
  `/u/${new Links({ publicUrl: 'http://x', secret: TRACKING_SECRET }).sign({ kind: 'unsubscribe', projectId: acme.project.id, contactId: 'ct_none' })}`
let port = 0
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  port = Number(new URL(stack.gatewayUrl).port)
  acme = await projectWithDomain(client, 'acme', 'acme.test', { defaultFrom: 'Acme <news@acme.test>' })
})

const head = (path: string, headers: Record<string, string | number>) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`

/** Sends the headers (and `firstBytes` of the body), then reads the first answer without sending more. */
async function firstAnswer(path: string, headers: Record<string, string | number>, firstBytes = 0) {
  const c = await rawConversation(port)
  await c.write(head(path, headers))
  if (firstBytes > 0) await c.write(Buffer.alloc(firstBytes, 'x'))
  const raw = await c.until((r) => hasWholeAnswer(r))
  c.end()
  return { ...parseResponse(raw), closed: c.closed }
}

describe('a refused caller: answered from its headers, its body never read', () => {
  it('Expect: 100-continue with an invalid key is 401 with no 100 Continue first, and the connection closes', async () => {
    const r = await firstAnswer('/v1/emails', {
      Authorization: 'Bearer mk_live_not_a_key',
      Expect: '100-continue',
      'Content-Length': 10 * 1024 * 1024,
    })
    expect(r.statusLine, r.raw).toBe('HTTP/1.1 401 Unauthorized')
    expect(JSON.parse(r.body).error.code).toBe('invalid_api_key')
    expect(r.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/)
    // The client may never send the body it announced: what it sends next is no body of this request.
    expect(r.headers.connection).toBe('close')
    await r.closed
  })

  it('the admin mirror and the dashboard copy refuse an Expect: 100-continue before any 100 too', async () => {
    const mirror = await firstAnswer('/v1/admin/projects/acme/emails', {
      Authorization: 'Bearer wrong-admin-key',
      Expect: '100-continue',
      'Content-Length': 1024 * 1024,
    })
    expect(mirror.statusLine, mirror.raw).toBe('HTTP/1.1 401 Unauthorized')
    const dashboard = await firstAnswer('/dashboard/api/v1/admin/projects/acme/emails', {
      Expect: '100-continue',
      'Content-Length': 1024 * 1024,
    })
    expect(dashboard.status, dashboard.raw).toBeGreaterThanOrEqual(401)
    expect(dashboard.status, dashboard.raw).toBeLessThanOrEqual(403)
    expect(dashboard.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/)
  })

  it('a body over MAX_BODY_BYTES with an invalid key is 401, not 413, after 1 KiB of it', async () => {
    const r = await firstAnswer(
      '/v1/emails',
      { Authorization: 'Bearer mk_live_not_a_key', 'Content-Length': MAX_BODY_BYTES + 1 },
      1024,
    )
    expect(r.statusLine, r.raw).toBe('HTTP/1.1 401 Unauthorized')
    expect(JSON.parse(r.body).error.code).toBe('invalid_api_key')
    // Not read off and discarded to keep the connection: closed after the answer.
    expect(r.headers.connection).toBe('close')
    await r.closed
  })

  it('a 4 MiB body with no key is answered 401 while only 64 KiB of it was sent', async () => {
    // Read first, the gateway waited for (and held) the whole body: the answer was the 408 of a
    // body that stopped arriving.
    const r = await firstAnswer('/v1/emails', { 'Content-Length': 4 * 1024 * 1024 }, 64 * 1024)
    expect(r.statusLine, r.raw).toBe('HTTP/1.1 401 Unauthorized')
    expect(JSON.parse(r.body).error.code).toBe('missing_api_key')
    expect(r.headers.connection).toBe('close')
  })

  it('a small body that stops arriving, with no key, is 401 and its connection closes at once', async () => {
    // Kept open to discard the rest, the connection would wait for bytes that never come.
    const r = await firstAnswer('/v1/emails', { 'Content-Length': 100 }, 10)
    expect(r.statusLine, r.raw).toBe('HTTP/1.1 401 Unauthorized')
    expect(r.headers.connection).toBe('close')
    await r.closed
  })

  it('a small body with an invalid key is discarded and the connection goes on', async () => {
    const c = await rawConversation(port)
    await c.write(
      `${head('/v1/emails', { Authorization: 'Bearer mk_live_not_a_key', 'Content-Length': 2 })}{}` +
        'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    )
    const raw = await c.closed
    const first = parseResponse(raw)
    expect(first.statusLine, raw).toBe('HTTP/1.1 401 Unauthorized')
    expect(raw).toContain('HTTP/1.1 200 OK')
  })
})

describe('an authenticated caller still gets its 100 Continue', () => {
  it('Expect: 100-continue with a live key is 100, then 202 once the body is sent', async () => {
    const body = JSON.stringify(email(acme.from, { to: ['alice@example.com'], text: 'Hi' }))
    const c = await rawConversation(port)
    await c.write(
      head('/v1/emails', {
        Authorization: `Bearer ${acme.live}`,
        Expect: '100-continue',
        'Content-Length': Buffer.byteLength(body),
      }),
    )
    const interim = await c.until((r) => r.includes('\r\n\r\n'))
    expect(interim).toBe('HTTP/1.1 100 Continue\r\n\r\n')
    await c.write(body)
    const raw = await c.until((r) => hasWholeAnswer(r, interim.length))
    c.end()
    const r = parseResponse(raw.slice(interim.length))
    expect(r.statusLine, raw).toBe('HTTP/1.1 202 Accepted')
    expect(JSON.parse(r.body)).toEqual({ id: expect.stringMatching(/^email_/), status: 'queued' })
  })

  it('the public unsubscribe link and the dashboard sign-in (from its own page) still get 100 and read their bodies', async () => {
    for (const [path, body, extra, status] of [
      // The contact is unknown: once the body is read, the link answers as for a deleted one.
      [unsubscribePath(), 'List-Unsubscribe=One-Click', {}, 200],
      ['/dashboard/api/session', JSON.stringify({ key: 'wrong' }), { Origin: 'http://x' }, 401],
    ] as const) {
      const c = await rawConversation(port)
      await c.write(head(path, { ...extra, Expect: '100-continue', 'Content-Length': body.length }))
      const interim = await c.until((r) => r.includes('\r\n\r\n'))
      expect(interim, path).toBe('HTTP/1.1 100 Continue\r\n\r\n')
      await c.write(body)
      const raw = await c.until((r) => hasWholeAnswer(r, interim.length))
      c.end()
      const r = parseResponse(raw.slice(interim.length))
      expect(r.status, raw).toBe(status)
    }
  })
})

describe('the dashboard sign-in, which takes no key', () => {
  it('from another page is 403 from its headers: a 4 MiB body is not waited for', async () => {
    // Read first, up to MAX_BODY_BYTES, before the origin was looked at: the answer was the 408 of
    // a body that stopped arriving, and anyone could make the gateway hold 16 MiB per request.
    const r = await firstAnswer(
      '/dashboard/api/session',
      { Origin: 'https://evil.test', 'Content-Length': 4 * 1024 * 1024 },
      64 * 1024,
    )
    expect(r.statusLine, r.raw).toBe('HTTP/1.1 403 Forbidden')
    expect(JSON.parse(r.body).error.code).toBe('csrf_failed')
    expect(r.headers.connection).toBe('close')
  })

  it('reads a body of 64 KiB at most (a key is 4096 characters), not MAX_BODY_BYTES', async () => {
    const url = `http://127.0.0.1:${port}/dashboard/api/session`
    const send = (body: string) =>
      fetch(url, {
        method: 'POST',
        headers: { origin: `http://127.0.0.1:${port}`, 'content-type': 'application/json' },
        body,
      })
    // Padding the JSON allows: the key alone decides, until the body is over the limit.
    const padded = (n: number) => `{"key":"wrong"${' '.repeat(n - 15)}}`
    const fits = await send(padded(64 * 1024))
    expect(fits.status).toBe(401)
    const over = await send(padded(64 * 1024 + 1))
    expect(over.status).toBe(413)
    expect(((await over.json()) as { error: unknown }).error).toMatchObject({
      code: 'payload_too_large',
      message: 'The request body is larger than 65536 bytes',
    })
  })
})

describe('the one-click unsubscribe link, which takes no key', () => {
  it('with a bad token is the 404 page from its headers: a 4 MiB body is not waited for', async () => {
    // Read first, up to MAX_BODY_BYTES, before the token was looked at: the answer was the 408 of
    // a body that stopped arriving.
    const r = await firstAnswer('/u/not-a-token', { 'Content-Length': 4 * 1024 * 1024 }, 64 * 1024)
    expect(r.statusLine, r.raw).toBe('HTTP/1.1 404 Not Found')
    expect(r.body).toContain('Link not found')
    expect(r.headers.connection).toBe('close')
  })

  it('with a good token reads a body of 8 KiB at most, not MAX_BODY_BYTES', async () => {
    const send = (body: string) =>
      fetch(`${stack.gatewayUrl}${unsubscribePath()}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
      })
    // The contact is unknown: once the body is read, the link answers as for a deleted contact.
    const fits = await send(`List-Unsubscribe=One-Click&${'x'.repeat(8 * 1024 - 27)}`)
    expect(fits.status).toBe(200)
    const over = await send(`List-Unsubscribe=One-Click&${'x'.repeat(8 * 1024 - 26)}`)
    expect(over.status).toBe(413)
    expect(((await over.json()) as { error: unknown }).error).toMatchObject({ code: 'payload_too_large' })
  })
})
