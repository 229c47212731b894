import { waitFor } from '@mailer/testing'
import { connect, type NatsConnection, type Subscription } from 'nats'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql as sqlIn } from '../support/db.js'
import { TestDnsServer } from '../support/dns-server.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

let dns: TestDnsServer
let nc: NatsConnection
// Started below: the DNS settings name the test DNS server's address.
const { te, stack, client } = useStack([], {
  after: async () => {
    await nc?.close()
    await dns?.stop()
  },
})
let acme: Awaited<ReturnType<typeof createProject>>
let beta: Awaited<ReturnType<typeof createProject>>
const invalidations: Array<{ projectId: string }> = []

const sql = (text: string, params: unknown[] = []) => sqlIn(te, text, params)

const setup = (slug: string, domain: string, key = client.admin) =>
  client.post(`/v1/admin/projects/${slug}/domains/${domain}/setup`, key)
const pOf = (value: string) => /p=([^;\s]+)/.exec(value)?.[1] ?? ''

/** Publishes in the test DNS server exactly the records the API asked for. */
function publish(records: Array<{ name: string; value: string }>) {
  for (const r of records) dns.set(r.name, [r.value])
}

beforeAll(async () => {
  dns = await TestDnsServer.start()
  nc = await connect({ servers: te.natsUrl })
  const sub: Subscription = nc.subscribe(`${te.natsPrefix}.domains.invalidate`)
  void (async () => {
    for await (const m of sub) invalidations.push(m.json())
  })()
  await stack.startAll(['auth', 'email', 'gateway'], {
    DOMAIN_VERIFICATION: 'dns',
    DNS_SERVERS: dns.address,
    SPF_INCLUDE: 'spf.relay.test',
  })
  acme = await createProject(client, 'acme')
  beta = await createProject(client, 'beta')
})

describe('domain verification with DOMAIN_VERIFICATION=dns', () => {
  const domainOf = async (key: string, name: string, refresh = false) => {
    const r = await client.get(`/v1/domains${refresh ? '?refresh=1' : ''}`, key)
    expect(r.status).toBe(200)
    return r.body.data.find((d: any) => d.domain === name)
  }

  it('checks DNS at setup: pending while the records are missing', async () => {
    const r = await setup('acme', 'dns.test')
    expect(r.status).toBe(200)
    expect(r.body.verification).toBe('pending')
    expect(r.body.records.map((x: any) => x.status)).toEqual(['failed', 'failed', 'failed'])
    expect(r.body.records[1]).toMatchObject({ name: 'dns.test', value: 'v=spf1 include:spf.relay.test ~all' })
    expect(Date.parse(r.body.checkedAt)).not.toBeNaN()
  })

  it('becomes verified on ?refresh=1 once the records are published', async () => {
    const setupBody = (await setup('acme', 'dns.test')).body
    publish(setupBody.records)
    // Without refresh the stored result is served: no DNS query on a plain list.
    expect((await domainOf(acme.live, 'dns.test')).verification).toBe('pending')
    const before = invalidations.length
    const d = await domainOf(acme.live, 'dns.test', true)
    expect(d.verification).toBe('verified')
    expect(d.records.map((x: any) => x.status)).toEqual(['verified', 'verified', 'verified'])
    expect(pOf(d.records[0].value)).toBe(pOf(setupBody.records[0].value))
    expect(Date.parse(d.checkedAt)).toBeGreaterThanOrEqual(Date.parse(setupBody.checkedAt))
    await waitFor(() => invalidations.slice(before).some((m) => m.projectId === acme.project.id), {
      what: 'domains.invalidate',
    })
    // Stored: a plain list now says verified too.
    expect((await domainOf(acme.live, 'dns.test')).verification).toBe('verified')
  })

  it('a live send from the domain is refused until it is verified, then accepted at once', async () => {
    const { records } = (await setup('acme', 'sender.test')).body
    const send = () =>
      client.post('/v1/emails', acme.live, {
        from: 'hi@sender.test',
        to: 'x@example.com',
        subject: 'Hi',
        text: 'Hi',
      })
    const refused = await send()
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe('domain_not_verified')
    publish(records)
    expect((await domainOf(acme.live, 'sender.test', true)).verification).toBe('verified')
    expect((await send()).status).toBe(202)
  })

  it('treats DMARC as advisory and needs our exact DKIM key and SPF mechanism', async () => {
    const { records } = (await setup('beta', 'partial.test')).body
    dns.set(records[0].name, [records[0].value])
    dns.set('partial.test', ['v=spf1 include:_spf.other.test include:spf.relay.test -all'])
    const d = await domainOf(beta.live, 'partial.test', true)
    expect(d.verification).toBe('verified')
    expect(d.records.map((x: any) => x.status)).toEqual(['verified', 'verified', 'failed'])

    const other = (await setup('beta', 'wrongkey.test')).body
    dns.set(other.records[0].name, [`v=DKIM1; k=rsa; p=${pOf(records[0].value)}`])
    dns.set('wrongkey.test', ['v=spf1 include:_spf.other.test ~all'])
    const w = await domainOf(beta.live, 'wrongkey.test', true)
    expect(w.verification).toBe('pending')
    expect(w.records.map((x: any) => x.status)).toEqual(['failed', 'failed', 'failed'])
  })

  it('setup of an existing domain re-checks at once', async () => {
    const { records } = (await setup('beta', 'later.test')).body
    publish(records)
    const again = await setup('beta', 'later.test')
    expect(again.body.verification).toBe('verified')
    expect(again.body.records[0].value).toBe(records[0].value)
  })

  it('a verified domain whose record disappears fails, and recovers when it returns', async () => {
    dns.txt.delete('dns.test')
    const gone = await domainOf(acme.live, 'dns.test', true)
    expect(gone.verification).toBe('failed')
    expect(gone.records.map((x: any) => x.status)).toEqual(['verified', 'failed', 'verified'])
    dns.set('dns.test', ['v=spf1 include:spf.relay.test ~all'])
    expect((await domainOf(acme.live, 'dns.test', true)).verification).toBe('verified')
  })

  it('a domain still missing its records 72 hours after setup is failed', async () => {
    await setup('acme', 'stale.test')
    await sql("UPDATE domains SET created_at = now() - interval '73 hours' WHERE name = 'stale.test'")
    const d = await domainOf(acme.live, 'stale.test', true)
    expect(d.verification).toBe('failed')
  })

  it('the admin mirror refreshes too', async () => {
    const { records } = (await setup('acme', 'mirror.test')).body
    publish(records)
    const r = await client.get('/v1/admin/projects/acme/domains?refresh=true', client.admin)
    expect(r.body.data.find((d: any) => d.domain === 'mirror.test').verification).toBe('verified')
  })
})
