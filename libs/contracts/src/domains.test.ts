import { describe, expect, it } from 'vitest'
import { DomainsQuery, normalizeDomainName } from './domains.js'

describe('domain names', () => {
  it('lower-cases and drops the root dot', () => {
    expect(normalizeDomainName('Mail.Example.COM.')).toBe('mail.example.com')
    expect(normalizeDomainName('xn--bcher-kva.example')).toBe('xn--bcher-kva.example')
    expect(normalizeDomainName('a-b.c0.io')).toBe('a-b.c0.io')
  })

  it('rejects what is not a domain name', () => {
    for (const bad of [
      '',
      'localhost',
      'a..b',
      '.example.com',
      '-a.com',
      'a-.com',
      'a_b.com',
      '1.2.3.4',
      'ex ample.com',
      `${'a'.repeat(64)}.com`,
      `${'a.'.repeat(127)}com`,
    ]) {
      expect(normalizeDomainName(bad), bad).toBeNull()
    }
  })

  it('reads refresh as a flag', () => {
    expect(DomainsQuery.parse({ refresh: '1' })).toEqual({ refresh: true })
    expect(DomainsQuery.parse({ refresh: 'false' })).toEqual({ refresh: false })
    expect(DomainsQuery.parse({})).toEqual({})
    expect(DomainsQuery.safeParse({ refresh: 'yes please' }).success).toBe(false)
  })
})
