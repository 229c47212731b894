import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TestDnsServer } from '../../../tests/support/dns-server.js'
import { TxtResolver } from '../src/infra/dns-resolver.js'

let dns: TestDnsServer

beforeAll(async () => {
  dns = await TestDnsServer.start()
})
afterAll(() => dns.stop())

describe('TXT lookups against a real DNS server', () => {
  it('joins the strings of a long record and returns every record', async () => {
    const long = `v=DKIM1; k=rsa; p=${'A'.repeat(400)}`
    dns.set('s._domainkey.example.test', [long, 'other'])
    const r = await new TxtResolver([dns.address], 1000).lookup('s._domainkey.example.test')
    expect(r).toEqual({ kind: 'found', txts: [long, 'other'] })
  })

  it('sees a record published after an earlier lookup (no cache)', async () => {
    const resolver = new TxtResolver([dns.address], 1000)
    expect(await resolver.lookup('later.example.test')).toEqual({ kind: 'missing' })
    dns.set('later.example.test', ['v=spf1 a mx ~all'])
    expect(await resolver.lookup('later.example.test')).toEqual({ kind: 'found', txts: ['v=spf1 a mx ~all'] })
  })

  it('tells a missing name from a server that does not answer', async () => {
    expect(await new TxtResolver([dns.address], 1000).lookup('nothing.example.test')).toEqual({
      kind: 'missing',
    })
    // A port nobody listens on: the query fails without proving anything about the name.
    const silent = await TestDnsServer.start()
    const addr = silent.address
    await silent.stop()
    const r = await new TxtResolver([addr], 200).lookup('nothing.example.test')
    expect(r.kind).toBe('error')
  })
})
