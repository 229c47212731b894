import { parseEnv } from '@mailer/config'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { dnsEnvFields, isDnsServer } from './dns-env.js'

const schema = z.object(dnsEnvFields)

describe('domain verification settings', () => {
  it('defaults to skip with the system resolvers', () => {
    expect(parseEnv(schema, {})).toEqual({
      DOMAIN_VERIFICATION: 'skip',
      DNS_SERVERS: [],
      DNS_TIMEOUT_MS: 2000,
    })
  })

  it('reads a comma list of servers, with or without ports', () => {
    const env = parseEnv(schema, {
      DOMAIN_VERIFICATION: 'dns',
      DNS_SERVERS: '1.1.1.1, 127.0.0.1:5353,[::1]:53',
      SPF_INCLUDE: 'spf.relay.example',
    })
    expect(env.DNS_SERVERS).toEqual(['1.1.1.1', '127.0.0.1:5353', '[::1]:53'])
    expect(env.SPF_INCLUDE).toBe('spf.relay.example')
  })

  it('names the variable that is wrong', () => {
    expect(() => parseEnv(schema, { DNS_SERVERS: 'dns.google' })).toThrow(/DNS_SERVERS/)
    expect(() => parseEnv(schema, { DOMAIN_VERIFICATION: 'maybe' })).toThrow(/DOMAIN_VERIFICATION/)
    expect(() => parseEnv(schema, { SPF_INCLUDE: 'not a domain' })).toThrow(/SPF_INCLUDE/)
  })

  it('accepts only IP addresses with optional ports', () => {
    expect(['8.8.8.8', '8.8.8.8:53', '::1', '[2001:db8::1]', '[::1]:5353'].every(isDnsServer)).toBe(true)
    expect(['8.8.8.8:0', '8.8.8.8:70000', 'localhost', '1.2.3', '[::1]:x', ''].some(isDnsServer)).toBe(false)
  })
})
