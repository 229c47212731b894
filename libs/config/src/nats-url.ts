/** What `connect()` needs from `NATS_URL`: the servers, and the login some of them carry. */
export interface NatsLogin {
  servers: string[]
  user?: string
  pass?: string
  token?: string
}

/**
 * Splits `NATS_URL` (one URL or a comma-separated list) into servers and login. The nats client
 * ignores credentials written in a URL (it would connect without them and get "Authorization
 * Violation"), so `nats://user:pass@host:4222` gives `user`/`pass` and `nats://token@host:4222` a
 * token, percent-decoded, and the servers are passed on without them (they never reach a log).
 */
export function parseNatsUrl(natsUrl: string): NatsLogin {
  const login: NatsLogin = { servers: [] }
  for (const raw of natsUrl.split(',')) {
    const s = raw.trim()
    if (!s) continue
    const at = s.lastIndexOf('@')
    if (at < 0) {
      login.servers.push(s)
      continue
    }
    const scheme = s.indexOf('://')
    const start = scheme < 0 ? 0 : scheme + 3
    const auth = s.slice(start, at)
    login.servers.push(s.slice(0, start) + s.slice(at + 1))
    if (login.user !== undefined || login.token !== undefined || !auth) continue
    const colon = auth.indexOf(':')
    if (colon < 0) login.token = decodeURIComponent(auth)
    else {
      login.user = decodeURIComponent(auth.slice(0, colon))
      login.pass = decodeURIComponent(auth.slice(colon + 1))
    }
  }
  return login
}
