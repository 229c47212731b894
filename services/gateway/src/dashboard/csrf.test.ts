import type { Request } from 'express'
import { describe, expect, it } from 'vitest'
import { originHost, sameOrigin } from './csrf.js'

const req = (headers: Record<string, string>, host = '127.0.0.1:3000') =>
  ({ host, get: (name: string) => headers[name.toLowerCase()] }) as unknown as Request

describe('sameOrigin', () => {
  it('accepts the page’s own origin, by Origin or else Referer', () => {
    expect(sameOrigin(req({ origin: 'http://127.0.0.1:3000' }))).toBe(true)
    expect(sameOrigin(req({ referer: 'http://127.0.0.1:3000/dashboard/emails' }))).toBe(true)
    expect(sameOrigin(req({ origin: 'https://Mail.Example.com' }, 'mail.example.com'))).toBe(true)
  })

  it('refuses other origins, opaque origins, cross-site fetches and requests with no origin', () => {
    expect(sameOrigin(req({ origin: 'http://evil.test' }))).toBe(false)
    expect(sameOrigin(req({ origin: 'http://127.0.0.1:3001' }))).toBe(false)
    expect(sameOrigin(req({ origin: 'null' }))).toBe(false)
    expect(sameOrigin(req({ origin: 'http://127.0.0.1:3000', 'sec-fetch-site': 'cross-site' }))).toBe(false)
    expect(sameOrigin(req({}))).toBe(false)
  })

  it('accepts configured extra origins', () => {
    expect(sameOrigin(req({ origin: 'https://ops.example.com' }), ['https://ops.example.com'])).toBe(true)
  })

  it('originHost keeps only http(s) hosts', () => {
    expect(originHost('https://a.example:8443')).toBe('a.example:8443')
    expect(originHost('javascript:alert(1)')).toBeNull()
    expect(originHost('not a url')).toBeNull()
  })
})
