import { createHash, timingSafeEqual } from 'node:crypto'
import { type Bus, Unreachable } from '@mailer/bus'
import {
  AuthInvalidation,
  type Caller,
  KEY_RE,
  MailerError,
  ResolveProjectResponse,
  SUBJECTS,
  VerifyKeyResponse,
} from '@mailer/contracts'
import type { Logger, Metrics } from '@mailer/observability'
import type { Request } from 'express'
import { StaleKeyUses } from './stale-key-uses.js'
import { VerifiedKeys } from './verified-keys.js'

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest()

/**
 * No Bearer key, in the three forms a caller gets wrong, each told what was wrong: no header at
 * all, a header of another scheme (a bare key, `Basic`, `Token`: the code stays
 * `missing_api_key`, interface.md's "no Bearer header"), and `Bearer` with nothing after it.
 * The header's text is never quoted back: it may be a key.
 */
const missing = (why: 'none' | 'scheme' | 'empty' = 'none') =>
  new MailerError(
    'missing_api_key',
    {
      none: 'Missing API key: send Authorization: Bearer <API_KEY>',
      scheme: 'Missing API key: Authorization must use the Bearer scheme, as Authorization: Bearer <API_KEY>',
      empty: 'Missing API key: Authorization: Bearer is followed by no key',
    }[why],
  )

/**
 * The token of `Authorization: Bearer <token>`: everything after the scheme, trimmed. No header,
 * another scheme or an empty token is `missing_api_key`; a token that is no key (spaces
 * included) is the caller's `invalid_api_key`, and the admin key may be any string.
 *
 * The header on more than one line is `invalid_api_key`: Node keeps only the first line of a
 * repeated Authorization, so a request carrying a live key and a test key (a client's default
 * header plus the caller's own) was served as whichever came first, sending for real what the
 * caller may have meant as a test. Which key the caller meant cannot be known; none is taken.
 */
function bearer(req: Request): string {
  const lines = req.headersDistinct.authorization
  if (lines && lines.length > 1)
    throw new MailerError(
      'invalid_api_key',
      'Authorization was sent more than once; send one Authorization: Bearer <API_KEY>',
    )
  const h = lines?.[0]
  if (!h) throw missing()
  const m = /^\s*Bearer(?:\s+([\s\S]*))?$/i.exec(h)
  if (!m) throw missing('scheme')
  const token = m[1]?.trim()
  if (!token) throw missing('empty')
  return token
}

/**
 * The token read as UTF-8, when that differs from how it arrived. Node hands a header value over
 * one character per byte (latin1), so an admin key with a character beyond ASCII, sent by curl as
 * UTF-8 bytes, arrived as `clÃ©` and could never match `clé`; a client writing such characters as
 * single bytes (Node's fetch, for latin1 ones) is still matched as sent. Null for ASCII tokens and
 * for bytes that are not UTF-8.
 */
function utf8Reading(token: string): string | null {
  if (!/[\x80-\xff]/.test(token) || /[\u0100-\uffff]/.test(token)) return null
  const s = Buffer.from(token, 'latin1').toString('utf8')
  return s.includes('\ufffd') ? null : s
}

const adminCaller = (req: Request): Caller => ({
  requestId: req.requestId,
  via: 'admin',
  project: null,
  apiKeyId: null,
  mode: 'live',
})

/** Any token but the admin key on an admin route; a project key is told what it is not. */
const notTheAdminKey = (token: string) =>
  new MailerError(
    'invalid_api_key',
    KEY_RE.test(token)
      ? 'Invalid admin key: /v1/admin routes take the admin key, not a project API key'
      : 'Invalid admin key',
  )

const needsAdminKey = () =>
  new MailerError('admin_only', 'This route needs the admin key; project keys cannot use it')

export interface AuthenticatorOptions {
  /** How long a request waits for the auth service (AUTH_TIMEOUT_MS). */
  timeoutMs: number
  /** How long past its TTL a verified key serves while auth cannot be reached (0: never). */
  staleGraceMs: number
  logger: Logger
  metrics: Metrics
  verifiedTtlMs?: number
}

export class Authenticator {
  private readonly adminDigest: Buffer | null
  private readonly verified: VerifiedKeys
  private readonly staleUses: StaleKeyUses
  private readonly timeoutMs: number

  constructor(
    private readonly bus: Bus,
    adminKey: string | undefined,
    opts: AuthenticatorOptions,
  ) {
    this.adminDigest = adminKey ? sha256(adminKey) : null
    this.timeoutMs = opts.timeoutMs
    this.verified = new VerifiedKeys(opts.verifiedTtlMs ?? 5_000, opts.staleGraceMs)
    this.staleUses = new StaleKeyUses(opts.logger, opts.metrics)
    bus.subscribeInvalidations(SUBJECTS.authInvalidate, {
      onMessage: (p) => this.verified.apply(AuthInvalidation.parse(p)),
      onMissed: () => this.verified.clear(),
    })
  }

  /** Equal-length digests compared in constant time, so timing says nothing about the key. */
  private isAdminKey(token: string): boolean {
    if (this.adminDigest === null) return false
    const asSent = timingSafeEqual(sha256(token), this.adminDigest)
    const utf8 = utf8Reading(token)
    return (utf8 !== null && timingSafeEqual(sha256(utf8), this.adminDigest)) || asSent
  }

  private async verify(token: string, requestId: string): Promise<VerifyKeyResponse> {
    if (!KEY_RE.test(token)) throw new MailerError('invalid_api_key', 'Invalid API key')
    const keyHash = createHash('sha256').update(token, 'utf8').digest('hex')
    const hit = this.verified.get(keyHash)
    if (hit) return hit
    const seen = this.verified.generation
    let v: VerifyKeyResponse
    try {
      v = await this.bus.request(
        SUBJECTS.authVerify,
        { keyHash, requestId },
        { timeoutMs: this.timeoutMs, schema: VerifyKeyResponse },
      )
    } catch (e) {
      // Only when no auth replica could answer (verified-keys.ts says why that is safe); a key
      // auth refused, or a 503 auth sent itself, is answered as auth said.
      const stale = e instanceof Unreachable ? this.verified.stale(keyHash) : undefined
      if (stale === undefined) {
        if (e instanceof MailerError && e.status < 500) this.verified.forget(keyHash)
        throw e
      }
      this.staleUses.used()
      return stale
    }
    this.staleUses.answered()
    this.verified.set(keyHash, v, seen)
    return v
  }

  /** Project routes: a valid project key. The admin key is not one (401 invalid_api_key). */
  async project(req: Request): Promise<Caller> {
    const token = bearer(req)
    // Still 401 invalid_api_key (interface.md part 5), but an operator who sent the admin key is
    // told where it works rather than "Invalid API key", as if it were mistyped. Only a token that
    // is no project key is compared, and only its holder learns what it is.
    if (!KEY_RE.test(token) && this.isAdminKey(token))
      throw new MailerError(
        'invalid_api_key',
        'The admin key works only on /v1/admin routes; act on a project at /v1/admin/projects/:slug/..., or send a project API key',
      )
    const v = await this.verify(token, req.requestId)
    return { requestId: req.requestId, via: 'api', project: v.project, apiKeyId: v.key.id, mode: v.key.mode }
  }

  /**
   * A route about the API rather than one of its operations (GET /openapi.json): any key that
   * works, the admin key or a project key (interface.md part 5: every request but /health and the
   * public links needs one).
   */
  async anyKey(req: Request): Promise<void> {
    if (this.isAdminKey(bearer(req))) return
    await this.project(req)
  }

  /**
   * Admin routes: the admin key. Anything else is "not the admin key" (401 invalid_api_key,
   * interface.md's admin auth failures), a project key included, with no round trip to look it up.
   */
  async admin(req: Request): Promise<Caller> {
    const token = bearer(req)
    if (this.isAdminKey(token)) return adminCaller(req)
    throw notTheAdminKey(token)
  }

  /**
   * An admin-only route (RouteDef.adminOnly, interface.md's domain setup): the admin key; a
   * working project key gets 403 admin_only; anything else 401 as on every admin route.
   */
  async adminOnly(req: Request): Promise<Caller> {
    const token = bearer(req)
    if (this.isAdminKey(token)) return adminCaller(req)
    if (KEY_RE.test(token)) {
      let works = false
      try {
        await this.verify(token, req.requestId)
        works = true
      } catch (e) {
        if (e instanceof MailerError && e.code === 'service_unavailable') throw e
      }
      if (works) throw needsAdminKey()
    }
    throw notTheAdminKey(token)
  }

  /**
   * The project path of an admin-only route: a project key is authenticated as on any project
   * route (its own 401/403 when it does not work), then told the route needs the admin key.
   */
  async refuseProjectKey(req: Request): Promise<never> {
    await this.project(req)
    throw needsAdminKey()
  }

  /** Admin mirror of a project route: the admin key, acting live on `:slug` without an API key. */
  async mirror(req: Request, slug: string): Promise<Caller> {
    return this.onProject(await this.admin(req), slug)
  }

  /** An admin caller (admin key or dashboard session) acting on `slug`; 404 project_not_found. */
  async onProject(caller: Caller, slug: string): Promise<Caller> {
    const p = await this.bus.request(
      SUBJECTS.authResolveProject,
      { slug },
      { timeoutMs: this.timeoutMs, schema: ResolveProjectResponse },
    )
    const { disabled: _disabled, ...project } = p
    return { ...caller, project }
  }
}
