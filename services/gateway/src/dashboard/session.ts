import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * Dashboard sessions without server-side storage: the cookie carries `v1.<sid>.<exp>.<mac>`, where
 * the MAC is HMAC-SHA256 under a key derived (HKDF) from ADMIN_API_KEY. Every gateway replica
 * derives the same key, so any replica accepts a session another one issued, and rotating the admin
 * key signs everybody out. The CSRF token is a second MAC over the session id: it cannot be made
 * without the key and is useless with any other session.
 */
export interface Session {
  sid: string
  /** Unix seconds. */
  expiresAt: number
}

const b64url = (b: Buffer) => b.toString('base64url')

const safeEqual = (a: string, b: string): boolean => {
  // Hash first so the comparison is constant-time whatever the lengths.
  const ha = createHash('sha256').update(a).digest()
  const hb = createHash('sha256').update(b).digest()
  return timingSafeEqual(ha, hb) && a.length === b.length
}

export class SessionSigner {
  private readonly key: Buffer
  private readonly adminDigest: Buffer

  constructor(adminKey: string) {
    this.key = Buffer.from(hkdfSync('sha256', adminKey, 'mailer-dashboard', 'session-v1', 32))
    this.adminDigest = createHash('sha256').update(adminKey, 'utf8').digest()
  }

  /** The admin key check of the sign-in form, in constant time (equal-length digests). */
  isAdminKey(candidate: string): boolean {
    return timingSafeEqual(createHash('sha256').update(candidate, 'utf8').digest(), this.adminDigest)
  }

  private mac(text: string): string {
    return b64url(createHmac('sha256', this.key).update(text).digest())
  }

  issue(ttlSeconds: number, nowMs = Date.now()): { session: Session; cookie: string } {
    const sid = b64url(randomBytes(18))
    const expiresAt = Math.floor(nowMs / 1000) + ttlSeconds
    const body = `v1.${sid}.${expiresAt}`
    return { session: { sid, expiresAt }, cookie: `${body}.${this.mac(body)}` }
  }

  /** The session a cookie value stands for, or null when it is forged, malformed or expired. */
  verify(cookie: string | undefined, nowMs = Date.now()): Session | null {
    if (!cookie || cookie.length > 200) return null
    const parts = cookie.split('.')
    if (parts.length !== 4 || parts[0] !== 'v1') return null
    const [, sid, exp, mac] = parts as [string, string, string, string]
    if (!/^[A-Za-z0-9_-]{24}$/.test(sid) || !/^\d{1,12}$/.test(exp)) return null
    if (!safeEqual(mac, this.mac(`v1.${sid}.${exp}`))) return null
    const expiresAt = Number(exp)
    if (expiresAt * 1000 <= nowMs) return null
    return { sid, expiresAt }
  }

  csrfToken(session: Session): string {
    return this.mac(`csrf.${session.sid}`)
  }

  checkCsrf(session: Session, token: string | undefined): boolean {
    return typeof token === 'string' && safeEqual(token, this.csrfToken(session))
  }
}

/**
 * Session ids signed out before they expired. A stateless cookie stays valid until it expires, so
 * sign-out adds its id here on every replica until then: at once through the NATS announcement,
 * and from PostgreSQL (where every sign-out is written first) at start and after each reconnect,
 * since a replica started later or disconnected meanwhile never got the announcement. Until such a
 * load has succeeded the set may lack a sign-out, and says so (`complete`), so that no request is
 * served on a session it cannot vouch for.
 */
export class RevokedSessions {
  private readonly ids = new Map<string, number>()
  private generation = 0
  private loadedGeneration = -1

  add(sid: string, expiresAt: number, nowMs = Date.now()): void {
    this.prune(nowMs)
    if (expiresAt * 1000 > nowMs) this.ids.set(sid, expiresAt)
  }

  has(sid: string): boolean {
    return this.ids.has(sid)
  }

  /** Every sign-out up to the last load is here, and every announcement since. */
  get complete(): boolean {
    return this.loadedGeneration === this.generation
  }

  /** Announcements may have been missed (a NATS reconnect): incomplete until the next load. */
  invalidate(): void {
    this.generation++
  }

  /** Starts a load from the database: pass the ticket to `loaded` with what it read. */
  beginLoad(): number {
    return this.generation
  }

  /**
   * Adds what a load read (to what is here: an announcement that came while it read may be newer
   * than its snapshot). Complete only if nothing was invalidated since the load began.
   */
  loaded(ticket: number, rows: Iterable<{ sid: string; expiresAt: number }>, nowMs = Date.now()): void {
    this.prune(nowMs)
    for (const r of rows) if (r.expiresAt * 1000 > nowMs) this.ids.set(r.sid, r.expiresAt)
    if (ticket === this.generation) this.loadedGeneration = ticket
  }

  private prune(nowMs: number): void {
    for (const [sid, exp] of this.ids) if (exp * 1000 <= nowMs) this.ids.delete(sid)
  }
}

/** Reads one cookie from a Cookie header (no dependency for the two cookies we use). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined
  for (const part of header.split(';')) {
    const i = part.indexOf('=')
    if (i === -1) continue
    if (part.slice(0, i).trim() === name) return part.slice(i + 1).trim()
  }
  return undefined
}
