import { describe, expect, it } from 'vitest'
import { asciiDomain } from './ascii-domain.js'

describe('asciiDomain', () => {
  it('lower-cases ASCII and gives an internationalised domain as punycode', () => {
    expect(asciiDomain('ACME.test')).toBe('acme.test')
    expect(asciiDomain('Bücher.test')).toBe('xn--bcher-kva.test')
    expect(asciiDomain('xn--bcher-kva.test')).toBe('xn--bcher-kva.test')
  })

  it('leaves what is no domain as it was, lower-cased, for the caller to refuse', () => {
    expect(asciiDomain('bü#x.test')).toBe('bü#x.test')
    expect(asciiDomain('bü\u0000.test')).toBe('bü\u0000.test')
  })
})
