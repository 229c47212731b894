import { describe, expect, it } from 'vitest'
import { signinClient } from './signin-client.js'

describe('signinClient', () => {
  it('counts an IPv4 client per exact address', () => {
    expect(signinClient('192.0.2.1')).toBe('192.0.2.1')
    expect(signinClient('192.0.2.2')).toBe('192.0.2.2')
    expect(signinClient(' 192.0.2.1 ')).toBe('192.0.2.1')
  })

  it('counts an IPv6 client per /64, whichever address of it is used', () => {
    const key = '2001:db8:1:2::/64'
    for (const ip of [
      '2001:db8:1:2::1',
      '2001:db8:1:2::2',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:db8:1:2:a:b:c:d',
      '2001:0db8:0001:0002:0000:0000:0000:0001', // uncompressed, leading zeros
      '2001:DB8:1:2::ABCD', // upper case
      '2001:db8:1:2:0:0:0:1',
      '2001:db8:1:2::1.2.3.4', // dotted tail
      '2001:db8:1:2:5:6:1.2.3.4',
    ])
      expect(signinClient(ip), ip).toBe(key)
  })

  it('keeps different /64s apart', () => {
    expect(signinClient('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64')
    expect(signinClient('2001:db8:1:2::1')).not.toBe(signinClient('2001:db8:1:3::1'))
    expect(signinClient('2001:db8::1')).toBe('2001:db8::/64')
    expect(signinClient('2001:db8:0:1::1')).toBe('2001:db8:0:1::/64')
    expect(signinClient('0:0:0:1::1')).toBe('0:0:0:1::/64')
  })

  it('drops a zone id and a port', () => {
    expect(signinClient('fe80::1%eth0')).toBe('fe80::/64')
    expect(signinClient('fe80::2%25en0')).toBe('fe80::/64')
    expect(signinClient('[2001:db8:1:2::1]:51234')).toBe('2001:db8:1:2::/64')
    expect(signinClient('[2001:db8:1:2::1]')).toBe('2001:db8:1:2::/64')
    expect(signinClient('192.0.2.1:51234')).toBe('192.0.2.1')
  })

  it('counts IPv4 inside IPv6 (mapped, NAT64) as the IPv4 address, not as one /64 for every IPv4 client', () => {
    expect(signinClient('::ffff:192.0.2.1')).toBe('192.0.2.1')
    expect(signinClient('::FFFF:192.0.2.1')).toBe('192.0.2.1')
    expect(signinClient('::ffff:c000:201')).toBe('192.0.2.1')
    expect(signinClient('0:0:0:0:0:ffff:192.0.2.1')).toBe('192.0.2.1')
    expect(signinClient('[::ffff:192.0.2.1]:443')).toBe('192.0.2.1')
    expect(signinClient('::ffff:192.0.2.2')).toBe('192.0.2.2')
    expect(signinClient('64:ff9b::192.0.2.1')).toBe('192.0.2.1')
    expect(signinClient('::1')).toBe('::/64')
  })

  it('keeps what is not an address as it was written (one count), and names a missing one', () => {
    expect(signinClient(undefined)).toBe('unknown')
    expect(signinClient('unknown')).toBe('unknown')
    for (const ip of [
      '256.0.0.1',
      '1.2.3',
      '2001:db8::1::2',
      '1:2:3:4:5:6:7:8:9',
      '12345::1',
      ':1:2:3:4:5:6:7',
      '1::2.3.4',
    ])
      expect(signinClient(ip), ip).toBe(ip)
    expect(signinClient('1:2:3:4:5:6:7::')).toBe('1:2:3:4::/64')
  })
})
