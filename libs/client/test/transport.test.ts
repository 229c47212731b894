import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { inspect } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MailerApiError, MailerClient, MailerConnectionError } from '../src/index.js'
import { HttpTransport } from '../src/transport.js'

// A real HTTP server answering what a deployment (or a proxy in front of it) can answer, for the
// cases the real services cannot be made to produce on demand.
interface Seen {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}
let answer: (n: number) => {
  status: number
  headers?: Record<string, string>
  body: string
  delayMs?: number
}
const seen: Seen[] = []
let server: Server
let baseUrl: string

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString('utf8')
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
    const a = answer(seen.length)
    setTimeout(() => {
      res.writeHead(a.status, {
        'content-type': 'application/json',
        'x-request-id': `req_${seen.length}`,
        ...a.headers,
      })
      res.end(a.body)
    }, a.delayMs ?? 0)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

const limited = (retryAfter: string) => ({
  status: 429,
  headers: { 'retry-after': retryAfter },
  body: JSON.stringify({ error: { type: 'rate_limit_error', code: 'rate_limited', message: 'slow down' } }),
})
const ok = { status: 202, body: JSON.stringify({ id: 'email_1', status: 'queued' }) }
const input = { from: 'a@b.test', to: 'c@d.test', subject: 's', text: 't' }

function client(extra: Partial<ConstructorParameters<typeof MailerClient>[0]> = {}) {
  seen.length = 0
  return new MailerClient({
    apiKey: 'fs_live_secretsecretsecretsecretsecret12',
    baseUrl,
    sleep: async () => undefined,
    ...extra,
  })
}

describe('HTTP transport', () => {
  it('makes one sdk_ idempotency key for a send and repeats it on every retry', async () => {
    answer = (n) => (n < 3 ? limited('2') : ok)
    const waits: number[] = []
    const c = client({ sleep: async (ms) => void waits.push(ms) })
    expect(await c.emails.send(input)).toEqual({ id: 'email_1', status: 'queued' })
    expect(seen).toHaveLength(3)
    const keys = seen.map((s) => s.headers['idempotency-key'])
    expect(keys[0]).toMatch(/^sdk_[0-9a-f-]{36}$/)
    expect(new Set(keys).size).toBe(1)
    expect(waits).toEqual([2000, 2000])
  })

  it("keeps the input's own idempotencyKey: no generated header overrides it", async () => {
    answer = () => ok
    await client().emails.send({ ...input, idempotencyKey: 'mine' })
    expect(seen[0]!.headers['idempotency-key']).toBeUndefined()
    await client().emails.send({ ...input, idempotencyKey: 'mine' }, { idempotencyKey: 'header-wins' })
    expect(seen[0]!.headers['idempotency-key']).toBe('header-wins')
  })

  it('retries a 503 only where a repeat is safe: reads, and sends carrying their key', async () => {
    const unavailable = {
      status: 503,
      headers: { 'retry-after': '1' },
      body: JSON.stringify({
        error: { type: 'internal_error', code: 'service_unavailable', message: 'try again' },
      }),
    }
    answer = (n) => (n === 1 ? unavailable : ok)
    const c = client()
    await c.emails.send(input)
    expect(seen).toHaveLength(2)
    // Only the sends' routes read Idempotency-Key: on any other write a key makes a repeat no
    // safer (the service may have applied the first attempt), so it is not retried.
    const c2 = client()
    const opts = { idempotencyKey: 'hook-1' } as Parameters<typeof c2.me>[0]
    answer = () => unavailable
    await expect(c2.webhooks.create({ url: 'https://example.com/h' }, opts)).rejects.toMatchObject({
      code: 'service_unavailable',
    })
    expect(seen).toHaveLength(1)
  })

  it('gives up at once when Retry-After is over 60 seconds', async () => {
    answer = () => limited('61')
    const e = await client()
      .emails.send(input)
      .catch((err: unknown) => err)
    expect(e).toMatchObject({ code: 'rate_limited', retryAfter: 61, requestId: 'req_1' })
    expect(seen).toHaveLength(1)
  })

  it('reads Retry-After as delta-seconds or an HTTP date only: a fraction over 60 gives up, unreadable waits 60 s', async () => {
    const waits: number[] = []
    const run = async (retryAfter: string) => {
      waits.length = 0
      answer = (n) => (n === 1 ? limited(retryAfter) : ok)
      const c = client({ sleep: async (ms: number) => void waits.push(ms) })
      return c.emails.send(input).catch((err: unknown) => err)
    }
    // Date.parse alone read these as days in 1961 and 2001, already past: retried at once.
    expect(await run('61.5')).toMatchObject({ code: 'rate_limited', retryAfter: 62 })
    expect(seen).toHaveLength(1)
    await run('1.5')
    expect(waits).toEqual([2_000])
    await run('5, 5')
    expect(waits).toEqual([5_000])
    for (const unreadable of ['-1', '+61', 'soon']) {
      await run(unreadable)
      expect(waits, unreadable).toEqual([60_000])
    }
  })

  it('refuses a maxRetries or timeoutMs that is no such number when the client is made, or on the call before sending', async () => {
    // NaN (an unset environment variable through Number) compared false with every count: a
    // client retried without end; a negative time-out failed each call with a RangeError.
    for (const maxRetries of [Number.NaN, Number.POSITIVE_INFINITY, -1, 1.5])
      expect(() => client({ maxRetries }), String(maxRetries)).toThrow(TypeError)
    for (const timeoutMs of [Number.NaN, 0, -1, 2 ** 31])
      expect(() => client({ timeoutMs }), String(timeoutMs)).toThrow(TypeError)
    answer = () => limited('1')
    const e = await client()
      .emails.send(input, { maxRetries: Number.NaN })
      .catch((err: unknown) => err)
    expect(e).toBeInstanceOf(TypeError)
    expect(seen).toHaveLength(0)
  })

  it('an abort during a Retry-After wait ends the call at once, with no further request', async () => {
    answer = () => limited('30')
    const ac = new AbortController()
    // A wait that never ends by itself: only the abort can end the call.
    const call = client({ sleep: () => new Promise<void>(() => undefined), onRetry: () => ac.abort() })
      .me({ signal: ac.signal })
      .catch((err: unknown) => err)
    const hung = new Promise((r) => setTimeout(() => r('still waiting'), 5000))
    const e = await Promise.race([call, hung])
    expect(e).toBeInstanceOf(Error)
    expect((e as Error).name).toBe('AbortError')
    expect(seen).toHaveLength(1)
  })

  it('turns an answer that is not the contract shape into unexpected_response', async () => {
    answer = () => ({
      status: 502,
      headers: { 'content-type': 'text/html' },
      body: '<html>Bad gateway</html>',
    })
    const e = (await client()
      .me()
      .catch((err: unknown) => err)) as MailerApiError
    expect(e).toBeInstanceOf(MailerApiError)
    expect(e).toMatchObject({ status: 502, type: 'internal_error', code: 'unexpected_response' })
    expect(e.message).toContain('Bad gateway')
  })

  it('does not follow a redirect: a send redirected by a proxy is an error naming where, not a GET', async () => {
    answer = (n) =>
      n === 1
        ? { status: 301, headers: { location: `${baseUrl}/v1/emails/` }, body: '' }
        : { status: 200, body: JSON.stringify({ data: [], nextCursor: null }) }
    const e = (await client()
      .emails.send(input)
      .catch((err: unknown) => err)) as MailerApiError
    expect(e).toBeInstanceOf(MailerApiError)
    expect(e).toMatchObject({ status: 301, code: 'unexpected_response' })
    expect(e.message).toContain(`${baseUrl}/v1/emails/`)
    expect(seen.map((s) => s.method)).toEqual(['POST'])
  })

  it('a request with no answer in time is a MailerConnectionError', async () => {
    answer = () => ({ ...ok, delayMs: 500 })
    const e = await client({ timeoutMs: 100 })
      .me()
      .catch((err: unknown) => err)
    expect(e).toBeInstanceOf(MailerConnectionError)
    expect(e).toMatchObject({ timedOut: true })
  })

  it('sends query parameters, Dates as ISO strings, and never prints its key', async () => {
    answer = () => ({ status: 200, body: JSON.stringify({ data: [], nextCursor: null }) })
    const c = client()
    await c.emails.list({ limit: 5, since: new Date('2026-01-02T03:04:05Z'), status: undefined })
    expect(seen[0]!.url).toBe('/v1/emails?limit=5&since=2026-01-02T03%3A04%3A05.000Z')
    expect(seen[0]!.headers.authorization).toBe('Bearer fs_live_secretsecretsecretsecretsecret12')
    expect(inspect(c, { depth: 10 })).not.toContain('secretsecret')
  })

  it('refuses a key no header can carry, before any request and without quoting it', async () => {
    // A key pasted with a line break inside, or a stray control byte: fetch would refuse the
    // header and its error (quoting the whole header) would become the client's message.
    for (const apiKey of [
      'fs_live_TOPSECRET\r\nX-Evil: 1',
      'fs_live_TOPSECRET\u0001x',
      'fs_live_TOP\u0000SECRET',
    ]) {
      let caught: unknown
      try {
        await client({ apiKey }).me()
      } catch (e) {
        caught = e
      }
      expect(caught).toBeInstanceOf(TypeError)
      expect(String((caught as Error).message)).not.toContain('TOPSECRET')
      expect(inspect(caught, { depth: 10 })).not.toContain('TOPSECRET')
    }
    expect(seen).toHaveLength(0)
    // Whitespace around it (a key read from a file with its newline) is dropped, as fetch drops it.
    answer = () => ({ status: 200, body: '{}' })
    await client({ apiKey: 'fs_live_secretsecretsecretsecretsecret12\n' }).me()
    expect(seen[0]!.headers.authorization).toBe('Bearer fs_live_secretsecretsecretsecretsecret12')
    // Only around it: at both ends, any mix of them; what is inside goes as given.
    await client({ apiKey: ' \t\r\n fs_live_secret  secret \r\n\t ' }).me()
    expect(seen[0]!.headers.authorization).toBe('Bearer fs_live_secret  secret')
  })

  it('drops the slashes ending a base URL, and only those, however long a run of them inside', () => {
    const base = (url: string) => new HttpTransport({ baseUrl: url }).baseUrl
    expect(base('http://127.0.0.1:1/mailer///')).toBe('http://127.0.0.1:1/mailer')
    // A pattern like /\/+$/ retried from every slash of an inner run: this one took minutes.
    const inner = `http://127.0.0.1:1/${'/'.repeat(200_000)}x/`
    expect(base(inner)).toBe(inner.slice(0, -1))
  })

  it('refuses a base URL holding a user name or password, without quoting it', () => {
    // fetch cannot send them, and its error (quoting the URL) would carry the password along.
    let caught: unknown
    try {
      client({ baseUrl: 'http://ops:s3cret-pw@127.0.0.1:1' })
    } catch (e) {
      caught = e
    }
    expect(caught).toBeInstanceOf(TypeError)
    expect(inspect(caught, { depth: 10 })).not.toContain('s3cret-pw')
  })

  it('needs a key', () => {
    const saved = process.env.MAILER_API_KEY
    delete process.env.MAILER_API_KEY
    try {
      expect(() => new MailerClient({ baseUrl })).toThrow(TypeError)
    } finally {
      if (saved !== undefined) process.env.MAILER_API_KEY = saved
    }
  })
})

// fetch sends a header value only as bytes up to U+00FF, drops spaces around it and refuses a line
// break; the gateway reads header bytes as Latin-1. contract.md allows any key of 1-256 characters.
describe('values an HTTP header cannot carry as given', () => {
  const sentKeys = () => seen.map((s) => (JSON.parse(s.body) as { idempotencyKey?: string }).idempotencyKey)
  const unavailable = {
    status: 503,
    body: JSON.stringify({ error: { type: 'internal_error', code: 'service_unavailable', message: 'x' } }),
  }

  it("a send's idempotencyKey goes as the body's idempotencyKey, exactly as given, and no header", async () => {
    for (const key of ['订单-42', ' padded ', 'café', 'line\nbreak']) {
      answer = (n) => (n === 1 ? limited('1') : ok)
      const c = client()
      expect(await c.emails.send({ ...input, idempotencyKey: 'loses' }, { idempotencyKey: key })).toEqual({
        id: 'email_1',
        status: 'queued',
      })
      // Retried with the same key: the send is as safe to repeat as with the header.
      expect(seen, key).toHaveLength(2)
      expect(
        seen.map((s) => s.headers['idempotency-key']),
        key,
      ).toEqual([undefined, undefined])
      expect(sentKeys(), key).toEqual([key, key])
    }
    // A key a header carries still goes as the header, the input left as it was.
    answer = () => ok
    await client().emails.send(input, { idempotencyKey: 'order-42' })
    expect(seen[0]!.headers['idempotency-key']).toBe('order-42')
    expect(sentKeys()).toEqual([undefined])
  })

  it('a batch key goes into each item without a key of its own as <key>:<index>, as the service derives it', async () => {
    answer = (n) => (n === 1 ? unavailable : { status: 200, body: '{"data":[]}' })
    const c = client()
    await c.emails.sendBatch([input, { ...input, idempotencyKey: 'own' }, input], {
      idempotencyKey: '订单-7',
    })
    // A 503 is retried: every item carries its key.
    expect(seen).toHaveLength(2)
    expect(seen[1]!.headers['idempotency-key']).toBeUndefined()
    const items = JSON.parse(seen[1]!.body) as Array<{ idempotencyKey?: string }>
    expect(items.map((i) => i.idempotencyKey)).toEqual(['订单-7:0', 'own', '订单-7:2'])

    // Where `<key>:<index>` would pass the 256 characters of an item's key, nothing is sent.
    const e = await client()
      .emails.sendBatch([input], { idempotencyKey: '键'.repeat(255) })
      .catch((err: unknown) => err)
    expect(e).toBeInstanceOf(TypeError)
    expect((e as Error).message).toMatch(/^idempotencyKey /)
    expect((e as Error).message).not.toContain('键')
    expect(seen).toHaveLength(0)
  })

  it('a requestId a header cannot carry is a TypeError naming it, before any request', async () => {
    answer = () => ok
    for (const requestId of ['订单-42', 'line\nbreak', ' padded']) {
      const e = await client()
        .me({ requestId })
        .catch((err: unknown) => err)
      expect(e, requestId).toBeInstanceOf(TypeError)
      expect(e, requestId).not.toBeInstanceOf(MailerConnectionError)
      expect((e as Error).message, requestId).toMatch(/^requestId /)
      expect(seen, requestId).toHaveLength(0)
    }
    await client().me({ requestId: 'job-7' })
    expect(seen[0]!.headers['x-request-id']).toBe('job-7')
  })

  it('an extra header fetch cannot send is refused when the client is made; a refused connection stays a connection error', async () => {
    expect(() => client({ headers: { 'x-tenant': '租户-TOPSECRET' } })).toThrow(/x-tenant/)
    expect(() => client({ headers: { 'x-tenant': '租户-TOPSECRET' } })).not.toThrow(/TOPSECRET/)
    const e = await client({ baseUrl: 'http://127.0.0.1:9' })
      .me({ requestId: 'job-7' })
      .catch((err: unknown) => err)
    expect(e).toBeInstanceOf(MailerConnectionError)
  })
})
