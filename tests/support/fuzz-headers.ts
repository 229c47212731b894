import fc from 'fast-check'
import type { Access } from './fuzz-routes.js'

export interface Creds {
  live: string
  test: string
  admin: string
  /** The dashboard session's Cookie header, its CSRF token, and the gateway's origin. */
  cookie: string
  csrf: string
  origin: string
}

export type Headers = Record<string, string | string[]>

/** The credentials that pass the route's authentication, so the request reaches its checks. */
export function validAuth(access: Access, c: Creds): Headers {
  if (access === 'project') return { authorization: `Bearer ${c.live}` }
  if (access === 'admin' || access === 'mirror') return { authorization: `Bearer ${c.admin}` }
  if (access === 'dashboard') return { cookie: c.cookie, 'x-csrf-token': c.csrf, origin: c.origin }
  // The session routes never get the live session: a DELETE with it and its token would sign out.
  return {}
}

/**
 * Credentials of every wrong shape: none, no token, another scheme, a token with more after it,
 * the other kind of key (or mode), a duplicated header (Node keeps the first), overlong, bytes
 * beyond ASCII, a forged session, the session without its CSRF token or from another origin.
 */
export const oddAuth = (c: Creds): fc.Arbitrary<Headers> =>
  fc.constantFrom<Headers>(
    {},
    { authorization: 'Bearer' },
    { authorization: 'Bearer   ' },
    { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
    { authorization: `Bearer ${c.live} extra` },
    { authorization: c.live },
    { authorization: `bearer ${c.admin}` },
    { authorization: `Bearer fs_live_${'x'.repeat(40)}` },
    { authorization: `Bearer ${c.admin}` },
    { authorization: `Bearer ${c.live}` },
    { authorization: `Bearer ${c.test}` },
    { authorization: ['Bearer junk', `Bearer ${c.admin}`] },
    { authorization: [`Bearer ${c.live}`, 'Bearer junk'] },
    { authorization: `Bearer ${'a'.repeat(8000)}` },
    { authorization: 'Bearer \u00e9\u00ff\u0080' },
    { cookie: 'mailer_session=forged; mailer_csrf=x', 'x-csrf-token': 'x', origin: c.origin },
    { cookie: c.cookie, 'x-csrf-token': c.csrf, origin: 'http://evil.test' },
    { cookie: c.cookie, 'x-csrf-token': c.csrf, origin: c.origin, 'sec-fetch-site': 'cross-site' },
    { cookie: c.cookie },
    { cookie: `${c.cookie}; ${c.cookie}` },
  )

/** Absent most of the time, so that each odd header is seen alone often enough to blame. */
const rarely = <T>(arb: fc.Arbitrary<T>, weight = 12): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb })

/** Printable ASCII and latin1 bytes: what Node lets a client put in a header value. */
const headerText = fc.string({
  unit: fc
    .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }))
    .map((n) => String.fromCharCode(n)),
  maxLength: 300,
})

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom<string | string[]>(
      ...['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'],
      ...['application/json; charset=utf-16le', 'application/json; charset=bogus', 'application/xml'],
      ...['*/*', ';;;', 'application/json; charset="', 'a'.repeat(3000)],
      ['application/json', 'text/plain'],
    ),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
)

/**
 * The other headers a request can bring, each rarely: content types and encodings the gateway
 * does not speak, Idempotency-Key and X-Request-Id junk (duplicated too), Accept, Expect, proxy
 * headers, and framing that does not add up (a Content-Length shorter than the body, two different
 * ones, one with chunked transfer, a transfer coding that is not chunked).
 */
export const otherHeaders: fc.Arbitrary<{ headers: Headers; chunked: boolean }> = fc
  .record({
    'content-type': contentType,
    'content-encoding': rarely(fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'bogus', 'gzip, gzip')),
    'idempotency-key': rarely(fc.oneof(headerText, fc.array(headerText, { minLength: 2, maxLength: 2 })), 5),
    'x-request-id': rarely(fc.oneof(headerText, fc.array(headerText, { minLength: 2, maxLength: 2 }))),
    accept: rarely(fc.constantFrom('text/html', 'application/xml', '*/*', 'application/json;q=0', 'x')),
    expect: rarely(fc.constantFrom('100-continue', 'bogus')),
    'x-forwarded-for': rarely(fc.constantFrom('junk', '::1, 10.0.0.1', '300.1.1.1', ', ,')),
    'x-forwarded-proto': rarely(fc.constantFrom('https', 'gopher', '')),
    framing: rarely(fc.constantFrom('cl-short', 'cl-zero', 'cl-dup', 'te-cl', 'te-bogus', 'chunked')),
  })
  .map(({ framing, ...h }) => {
    const headers: Headers = {}
    for (const [k, v] of Object.entries(h)) if (v !== undefined) headers[k] = v
    if (framing === 'cl-short') headers['content-length'] = '__short__'
    if (framing === 'cl-zero') headers['content-length'] = '0'
    if (framing === 'cl-dup') headers['content-length'] = ['__len__', '__short__']
    if (framing === 'te-cl')
      Object.assign(headers, { 'transfer-encoding': 'chunked', 'content-length': '__len__' })
    if (framing === 'te-bogus') headers['transfer-encoding'] = 'gzip'
    return { headers, chunked: framing === 'chunked' }
  })

/** Puts the body's real length in place of the framing placeholders (a shorter one: one byte less). */
export function frame(headers: Headers, body: Buffer): Headers {
  const fill = (v: string) =>
    v === '__len__' ? String(body.length) : v === '__short__' ? String(Math.max(0, body.length - 1)) : v
  const out: Headers = {}
  for (const [k, v] of Object.entries(headers)) out[k] = Array.isArray(v) ? v.map(fill) : fill(v)
  return out
}
