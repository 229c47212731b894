import { start } from '@mailer/gateway/app'
import { loadEnv } from '@mailer/gateway/env'
import { beforeAll, describe, expect, it } from 'vitest'
import { ensureDashboardBuilt } from '../e2e/browser.js'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// The gateway side of the dashboard over plain HTTP: the page and its security headers, sign-in,
// cookies, CSRF and origin checks, and the session-authenticated admin API.
const { stack } = useStack(['auth', 'gateway'], { before: () => ensureDashboardBuilt(), timeout: 180_000 })
let base: string
let origin: string

beforeAll(() => {
  base = stack.gatewayUrl
  origin = new URL(base).origin
})

interface Res {
  status: number
  headers: Headers
  body: any
  cookies: string[]
}

async function call(
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Res> {
  const headers: Record<string, string> = { ...opts.headers }
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(base + path, {
    method,
    headers,
    redirect: 'manual',
    ...(opts.body !== undefined
      ? { body: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) }
      : {}),
  })
  const text = await res.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    /* html or empty */
  }
  return { status: res.status, headers: res.headers, body, cookies: res.headers.getSetCookie() }
}

/** Signs in like the browser does; returns the Cookie header and the CSRF token. */
async function signIn(ip = '10.0.0.1'): Promise<{ cookie: string; csrf: string }> {
  const r = await call('POST', '/dashboard/api/session', {
    body: { key: ADMIN_KEY },
    headers: { origin, 'x-forwarded-for': ip },
  })
  expect(r.status).toBe(200)
  return { cookie: r.cookies.map((c) => c.split(';')[0]).join('; '), csrf: r.body.csrfToken }
}

describe('the dashboard page', () => {
  it('is served with a strict CSP, no framing, and a relative <base href> for any depth', async () => {
    const root = await call('GET', '/dashboard/')
    expect(root.status).toBe(200)
    expect(root.headers.get('content-type')).toMatch(/^text\/html/)
    const csp = root.headers.get('content-security-policy')!
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/)
    expect(csp).toContain("frame-ancestors 'none'")
    expect(root.headers.get('x-frame-options')).toBe('DENY')
    expect(root.headers.get('x-content-type-options')).toBe('nosniff')
    expect(root.body).toContain('<base href="./">')
    expect(root.body).not.toMatch(/<script>[^<]/) // no inline script

    const deep = await call('GET', '/dashboard/projects/acme/webhooks')
    expect(deep.status).toBe(200)
    expect(deep.body).toContain('<base href="../../">')
  })

  it('redirects /dashboard to /dashboard/ with a relative Location; a missing asset is a 404, not the page', async () => {
    const r = await call('GET', '/dashboard?x=1')
    expect(r.status).toBe(308)
    expect(r.headers.get('location')).toBe('dashboard/?x=1')
    const asset = await call('GET', '/dashboard/assets/nope.js')
    expect(asset.status).toBe(404)
    expect(String(asset.body)).not.toContain('<div id="root">')
  })
})

describe('sign-in', () => {
  it('refuses a wrong key (401 invalid_api_key), bad bodies (400) and foreign origins (403 csrf_failed)', async () => {
    const h = { origin, 'x-forwarded-for': '10.0.1.1' }
    const wrong = await call('POST', '/dashboard/api/session', { body: { key: 'nope' }, headers: h })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' })
    expect(wrong.cookies).toEqual([])
    const none = await call('POST', '/dashboard/api/session', { headers: h })
    expect(none.body.error).toMatchObject({ code: 'missing_body' })
    const bad = await call('POST', '/dashboard/api/session', { body: { key: 1 }, headers: h })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_body', param: 'key' })
    const json = await call('POST', '/dashboard/api/session', { body: '{nope', headers: h })
    expect(json.body.error).toMatchObject({ code: 'invalid_body' })
    const foreign = await call('POST', '/dashboard/api/session', {
      body: { key: ADMIN_KEY },
      headers: { origin: 'http://evil.test' },
    })
    expect(foreign.status).toBe(403)
    expect(foreign.body.error).toMatchObject({ type: 'permission_error', code: 'csrf_failed' })
    const noOrigin = await call('POST', '/dashboard/api/session', { body: { key: ADMIN_KEY } })
    expect(noOrigin.status).toBe(403)
  })

  it('sets an HttpOnly, SameSite=Strict session cookie scoped to the API, Secure behind https', async () => {
    const r = await call('POST', '/dashboard/api/session', {
      body: { key: ADMIN_KEY },
      headers: { origin, 'x-forwarded-for': '10.0.2.1' },
    })
    expect(r.status).toBe(200)
    expect(r.headers.get('cache-control')).toBe('no-store')
    expect(new Date(r.body.expiresAt).getTime() - Date.now()).toBeGreaterThan(7.9 * 3600_000)
    const session = r.cookies.find((c) => c.startsWith('mailer_session='))!
    expect(session).toMatch(/HttpOnly/)
    expect(session).toMatch(/SameSite=Strict/)
    expect(session).toMatch(/Max-Age=28800/)
    expect(session).not.toMatch(/Path=/) // the browser scopes it to …/dashboard/api
    expect(session).not.toMatch(/Secure/)
    const csrf = r.cookies.find((c) => c.startsWith('mailer_csrf='))!
    expect(csrf).not.toMatch(/HttpOnly/)
    expect(csrf.split(';')[0]).toBe(`mailer_csrf=${r.body.csrfToken}`)

    const https = await call('POST', '/dashboard/api/session', {
      body: { key: ADMIN_KEY },
      headers: {
        origin: 'https://ops.example.com',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'ops.example.com',
        'x-forwarded-for': '10.0.2.2',
      },
    })
    expect(https.status).toBe(200)
    expect(https.cookies.every((c) => /; Secure/.test(c))).toBe(true)
  })

  it('makes the cookies Secure always or never as DASHBOARD_COOKIE_SECURE says', async () => {
    // `true`: TLS ended at a balancer that sends no X-Forwarded-Proto, so the gateway sees http.
    // `false`: never, even when the proxy says https.
    const cases: [string, Record<string, string>, boolean][] = [
      ['true', {}, true],
      ['false', { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'ops.example.com' }, false],
    ]
    for (const [i, [setting, extra, secure]] of cases.entries()) {
      const gateway = await start(loadEnv(stack.env({ DASHBOARD_COOKIE_SECURE: setting })))
      try {
        const from = extra['x-forwarded-host'] ? 'https://ops.example.com' : new URL(gateway.url).origin
        const headers = { ...extra, origin: from, 'x-forwarded-for': `10.0.3.${i + 1}` }
        const post = await fetch(`${gateway.url}/dashboard/api/session`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ key: ADMIN_KEY }),
        })
        expect(post.status, setting).toBe(200)
        const csrf = ((await post.json()) as { csrfToken: string }).csrfToken
        const set = post.headers.getSetCookie()
        expect(set.length, setting).toBe(2)
        expect(
          set.map((c) => /; Secure/.test(c)),
          setting,
        ).toEqual([secure, secure])
        // HSTS follows the same setting: a browser behind that balancer is on https.
        expect(post.headers.get('strict-transport-security'), setting).toBe(
          secure ? 'max-age=31536000' : null,
        )
        // Signing out clears them with the same flag (a browser ignores a non-Secure clear of a
        // Secure cookie).
        const cookie = set.map((c) => c.split(';')[0]).join('; ')
        const out = await fetch(`${gateway.url}/dashboard/api/session`, {
          method: 'DELETE',
          headers: { ...headers, cookie, 'x-csrf-token': csrf },
        })
        expect(out.status, setting).toBe(200)
        expect(
          out.headers.getSetCookie().map((c) => /; Secure/.test(c)),
          setting,
        ).toEqual([secure, secure])
      } finally {
        await gateway.stop()
      }
    }
  })

  it('slows down guessing: after 10 wrong keys from one address, 429 rate_limited even for the right key', async () => {
    const h = { origin, 'x-forwarded-for': '10.0.3.1' }
    for (let i = 0; i < 10; i++)
      expect(
        (await call('POST', '/dashboard/api/session', { body: { key: `guess-${i}` }, headers: h })).status,
      ).toBe(401)
    const limited = await call('POST', '/dashboard/api/session', { body: { key: ADMIN_KEY }, headers: h })
    expect(limited.status).toBe(429)
    expect(limited.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' })
    // The lockout lasts until the window that began at the first failure ends (5 min).
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(60)
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(300)
    // Another address is not affected.
    expect(
      (
        await call('POST', '/dashboard/api/session', {
          body: { key: ADMIN_KEY },
          headers: { origin, 'x-forwarded-for': '10.0.3.2' },
        })
      ).status,
    ).toBe(200)
  })
  it('counts the address the ingress saw: a guesser rewriting its own X-Forwarded-For entries is still limited', async () => {
    // The ingress appends the address it saw to whatever the client sent; everything to its left
    // is the client's own writing, a new "address" on every try.
    const via = (i: number) => ({ origin, 'x-forwarded-for': `198.51.100.${i}, 10.0.4.1` })
    for (let i = 0; i < 10; i++)
      expect(
        (await call('POST', '/dashboard/api/session', { body: { key: `guess-${i}` }, headers: via(i) }))
          .status,
      ).toBe(401)
    const limited = await call('POST', '/dashboard/api/session', {
      body: { key: ADMIN_KEY },
      headers: via(10),
    })
    expect(limited.status).toBe(429)
    expect(limited.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' })
  })
})

describe('the admin API behind the session', () => {
  it('needs a session (401 invalid_session); a forged cookie is no session', async () => {
    for (const cookie of [undefined, 'mailer_session=v1.AAAAAAAAAAAAAAAAAAAAAAAA.9999999999.forged']) {
      const r = await call('GET', '/dashboard/api/v1/admin/projects', cookie ? { headers: { cookie } } : {})
      expect(r.status).toBe(401)
      expect(r.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_session' })
    }
    // The session check itself answers "not signed in" without an error status (no red line
    // in the browser console of every operator who opens the dashboard).
    for (const cookie of [undefined, 'mailer_session=v1.AAAAAAAAAAAAAAAAAAAAAAAA.9999999999.forged']) {
      const r = await call('GET', '/dashboard/api/session', cookie ? { headers: { cookie } } : {})
      expect([r.status, r.body]).toEqual([200, { signedIn: false }])
    }
  })

  it('reads with the cookie alone; writes need the CSRF header, its cookie and the same origin', async () => {
    const { cookie, csrf } = await signIn()
    const list = await call('GET', '/dashboard/api/v1/admin/projects', { headers: { cookie } })
    expect(list.status).toBe(200)
    expect(list.body).toEqual({ data: [] })
    expect(list.headers.get('cache-control')).toBe('no-store')

    const body = { slug: 'dash-one', name: 'Dash one' }
    const noToken = await call('POST', '/dashboard/api/v1/admin/projects', {
      body,
      headers: { cookie, origin },
    })
    expect(noToken.status).toBe(403)
    expect(noToken.body.error).toMatchObject({ code: 'csrf_failed' })
    const wrongToken = await call('POST', '/dashboard/api/v1/admin/projects', {
      body,
      headers: { cookie, origin, 'x-csrf-token': `${csrf}x` },
    })
    expect(wrongToken.status).toBe(403)
    const sessionOnly = cookie.split('; ').find((c) => c.startsWith('mailer_session='))!
    const noCookie = await call('POST', '/dashboard/api/v1/admin/projects', {
      body,
      headers: { cookie: sessionOnly, origin, 'x-csrf-token': csrf },
    })
    expect(noCookie.status).toBe(403)
    const foreign = await call('POST', '/dashboard/api/v1/admin/projects', {
      body,
      headers: { cookie, origin: 'http://evil.test', 'x-csrf-token': csrf },
    })
    expect(foreign.status).toBe(403)
    const crossSite = await call('POST', '/dashboard/api/v1/admin/projects', {
      body,
      headers: { cookie, origin, 'x-csrf-token': csrf, 'sec-fetch-site': 'cross-site' },
    })
    expect(crossSite.status).toBe(403)

    const ok = await call('POST', '/dashboard/api/v1/admin/projects', {
      body,
      headers: { cookie, origin, 'x-csrf-token': csrf },
    })
    expect(ok.status).toBe(201)
    expect(ok.body).toMatchObject({ slug: 'dash-one', name: 'Dash one', disabled: false })
    // The same contract errors as the admin API.
    const taken = await call('POST', '/dashboard/api/v1/admin/projects', {
      body,
      headers: { cookie, origin, 'x-csrf-token': csrf },
    })
    expect(taken.status).toBe(409)
    expect(taken.body.error).toMatchObject({ type: 'conflict', code: 'slug_taken' })
    const invalid = await call('POST', '/dashboard/api/v1/admin/projects', {
      body: { slug: 'Bad Slug', name: 'x' },
      headers: { cookie, origin, 'x-csrf-token': csrf },
    })
    expect(invalid.body.error).toMatchObject({ code: 'invalid_body', param: 'slug' })
  })

  it('serves the admin mirror (404 project_not_found for an unknown slug) but no project-key route', async () => {
    const { cookie } = await signIn()
    const unknown = await call('GET', '/dashboard/api/v1/admin/projects/nope/webhooks', {
      headers: { cookie },
    })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toMatchObject({ code: 'project_not_found' })
    const projectRoute = await call('GET', '/dashboard/api/v1/emails', { headers: { cookie } })
    expect(projectRoute.status).toBe(404)
    expect(projectRoute.body.error).toMatchObject({ code: 'route_not_found' })
    const method = await call('PUT', '/dashboard/api/v1/admin/projects', { headers: { cookie } })
    expect(method.status).toBe(405)
    expect(method.body.error).toMatchObject({ code: 'method_not_allowed' })
    expect(method.headers.get('allow')).toBe('GET, HEAD, POST')
    // OPTIONS too, in the contract's shape (express answered it with 200 text/plain).
    for (const [path, allow] of <[string, string][]>[
      ['/dashboard/api/session', 'DELETE, GET, HEAD, POST'],
      ['/dashboard/api/v1/admin/projects/acme/emails', 'GET, HEAD, POST'],
    ]) {
      const options = await call('OPTIONS', path, { headers: { cookie } })
      expect([options.status, options.body.error?.code, options.headers.get('allow')], path).toEqual([
        405,
        'method_not_allowed',
        allow,
      ])
    }
  })

  it('sign-out ends the session at once, even for a copy of the cookie', async () => {
    const { cookie, csrf } = await signIn()
    expect((await call('GET', '/dashboard/api/session', { headers: { cookie } })).body).toMatchObject({
      signedIn: true,
      csrfToken: csrf,
    })
    const refused = await call('DELETE', '/dashboard/api/session', { headers: { cookie, origin } })
    expect(refused.status).toBe(403) // a foreign page cannot sign the operator out
    const out = await call('DELETE', '/dashboard/api/session', {
      headers: { cookie, origin, 'x-csrf-token': csrf },
    })
    expect(out.status).toBe(200)
    expect(out.body).toEqual({ signedOut: true })
    expect(out.cookies.some((c) => c.startsWith('mailer_session=;') && /Max-Age=0/.test(c))).toBe(true)
    const after = await call('GET', '/dashboard/api/v1/admin/projects', { headers: { cookie } })
    expect(after.status).toBe(401)
    expect(after.body.error.code).toBe('invalid_session')
    expect((await call('GET', '/dashboard/api/session', { headers: { cookie } })).body).toEqual({
      signedIn: false,
    })
  })
})
