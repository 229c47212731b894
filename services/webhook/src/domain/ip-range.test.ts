import { describe, expect, it } from 'vitest'
import { isIpLiteral, isPrivateAddress, parseIPv6 } from './ip-range.js'

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '0.0.0.0',
    '100.64.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    '::ffff:127.0.0.1',
    '::ffff:10.1.2.3',
    '::ffff:7f00:1',
    '64:ff9b::192.168.0.1',
    '[::1]',
    '192.0.0.8',
    '198.18.0.1',
    '198.19.255.255',
    '::ffff:0:10.0.0.1',
    '64:ff9b:1::808:808',
    '2002:a00:1::1',
    '2002:7f00:1::',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '100::1',
  ])('refuses %s', (ip) => expect(isPrivateAddress(ip)).toBe(true))

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '172.15.255.255',
    '172.32.0.0',
    '192.169.0.1',
    '11.0.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '2001:db8::1',
    '2002:808:808::1',
    '198.20.0.1',
    '192.0.1.1',
  ])('allows %s', (ip) => expect(isPrivateAddress(ip)).toBe(false))

  it('is false for things that are not addresses', () => {
    expect(isPrivateAddress('example.com')).toBe(false)
    expect(isPrivateAddress('256.1.1.1')).toBe(false)
    expect(isPrivateAddress('1:2:3:4:5:6:7:8:9')).toBe(false)
  })
})

describe('parsing', () => {
  it('expands IPv6 forms', () => {
    expect(parseIPv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1])
    expect(parseIPv6('2001:db8::ff00:42:8329')).toEqual([0x2001, 0xdb8, 0, 0, 0, 0xff00, 0x42, 0x8329])
    expect(parseIPv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304])
    expect(parseIPv6('1::2::3')).toBeNull()
    expect(parseIPv6('1.2.3.4')).toBeNull()
  })
  it('tells literals from host names', () => {
    expect(isIpLiteral('127.0.0.1')).toBe(true)
    expect(isIpLiteral('[::1]')).toBe(true)
    expect(isIpLiteral('localhost')).toBe(false)
  })
})
