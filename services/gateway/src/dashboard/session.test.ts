import { describe, expect, it } from 'vitest'
import { RevokedSessions, readCookie, SessionSigner } from './session.js'

describe('SessionSigner', () => {
  const signer = new SessionSigner('the-admin-key')
  const now = Date.UTC(2026, 0, 1)

  it('issues a cookie that it verifies until it expires', () => {
    const { session, cookie } = signer.issue(3600, now)
    expect(cookie).toMatch(/^v1\.[A-Za-z0-9_-]{24}\.\d+\.[A-Za-z0-9_-]+$/)
    expect(signer.verify(cookie, now + 3599_000)).toEqual(session)
    expect(signer.verify(cookie, now + 3600_000)).toBeNull()
  })

  it('another replica with the same admin key accepts it; another admin key does not', () => {
    const { cookie } = signer.issue(60, now)
    expect(new SessionSigner('the-admin-key').verify(cookie, now)).not.toBeNull()
    expect(new SessionSigner('rotated-key').verify(cookie, now)).toBeNull()
  })

  it('refuses tampered, truncated and malformed cookies', () => {
    const { cookie } = signer.issue(60, now)
    const [v, sid, exp, mac] = cookie.split('.')
    expect(signer.verify(`${v}.${sid}.${Number(exp) + 1000}.${mac}`, now)).toBeNull()
    expect(signer.verify(`${v}.${sid}.${exp}.${mac!.slice(0, -2)}AA`, now)).toBeNull()
    expect(signer.verify(`${v}.${sid}.${exp}`, now)).toBeNull()
    for (const bad of [undefined, '', 'x', 'v2.a.b.c', `${'v1.'.repeat(100)}`])
      expect(signer.verify(bad, now)).toBeNull()
  })

  it('checks the admin key and the session-bound CSRF token', () => {
    expect(signer.isAdminKey('the-admin-key')).toBe(true)
    expect(signer.isAdminKey('the-admin-key ')).toBe(false)
    const a = signer.issue(60, now).session
    const b = signer.issue(60, now).session
    expect(signer.checkCsrf(a, signer.csrfToken(a))).toBe(true)
    expect(signer.checkCsrf(a, signer.csrfToken(b))).toBe(false)
    expect(signer.checkCsrf(a, undefined)).toBe(false)
  })
})

describe('RevokedSessions', () => {
  it('remembers a signed-out session until it would have expired', () => {
    const r = new RevokedSessions()
    r.add('a', 100, 50_000)
    expect(r.has('a')).toBe(true)
    r.add('b', 200, 101_000) // pruning happens on add
    expect(r.has('a')).toBe(false)
    r.add('c', 10, 101_000) // already expired: nothing to remember
    expect(r.has('c')).toBe(false)
  })

  it('is complete only after a load that no reconnect overtook, and a load never drops an announcement', () => {
    const r = new RevokedSessions()
    expect(r.complete).toBe(false) // nothing read yet
    r.loaded(r.beginLoad(), [{ sid: 'a', expiresAt: 100 }], 50_000)
    expect([r.complete, r.has('a')]).toEqual([true, true])

    r.invalidate() // NATS came back: announcements may have been missed
    expect(r.complete).toBe(false)
    const ticket = r.beginLoad()
    r.add('b', 100, 50_000) // announced while the load reads
    r.invalidate() // and another reconnect before it ends
    r.loaded(
      ticket,
      [
        { sid: 'c', expiresAt: 100 },
        { sid: 'gone', expiresAt: 10 },
      ],
      50_000,
    )
    expect([r.complete, r.has('b'), r.has('c'), r.has('gone')]).toEqual([false, true, true, false])
    r.loaded(r.beginLoad(), [], 50_000)
    expect(r.complete).toBe(true)
  })
})

describe('readCookie', () => {
  it('finds one cookie among several', () => {
    expect(readCookie('a=1; mailer_session=v1.x.2.y; b=3', 'mailer_session')).toBe('v1.x.2.y')
    expect(readCookie('a=1', 'mailer_session')).toBeUndefined()
    expect(readCookie(undefined, 'a')).toBeUndefined()
  })
})
