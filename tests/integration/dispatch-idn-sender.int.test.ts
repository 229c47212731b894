import { waitFor } from '@mailer/testing'
import { dkimVerify } from 'mailauth/lib/dkim/verify'
import { simpleParser } from 'mailparser'
import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain, publishedDkimResolver } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// A project's internationalised domain is set up in its punycode form (the only one setup takes);
// its senders may still write the Unicode name, as mail clients show it.
const { client, relay } = useStack(['auth', 'email', 'gateway'], { dispatcher: true })
let live: string
let dkimResolver: (name: string, type: string) => Promise<string[][]>

beforeAll(async () => {
  live = (await projectWithDomain(client, 'idn-sender', 'xn--bcher-kva.test')).live
  dkimResolver = await publishedDkimResolver(client, live)
})

describe('a sender on an internationalised domain', () => {
  it('is accepted in its Unicode form and delivered signed under the punycode domain', async () => {
    const sent = await client.post('/v1/emails', live, {
      from: 'Bücher <news@Bücher.test>',
      to: ['ann@example.com'],
      subject: 'Neu',
      text: 'Neue Bücher',
    })
    // It was 403 invalid_sender: the lookup took the Unicode name for another domain.
    expect(sent.status).toBe(202)
    const id = sent.body.id as string
    await waitFor(async () => (await client.get(`/v1/emails/${id}`, live)).body.status === 'delivered', {
      timeoutMs: 20_000,
      what: `email ${id} delivered`,
    })

    const got = relay.forEmail(id)
    expect(got).toHaveLength(1)
    const mail = await simpleParser(got[0]!.raw)
    expect(mail.messageId).toBe(`<${id}@xn--bcher-kva.test>`)
    const verified = await dkimVerify(got[0]!.raw, { resolver: dkimResolver } as any)
    expect(verified.results[0]).toMatchObject({
      signingDomain: 'xn--bcher-kva.test',
      status: { result: 'pass' },
    })
  })
})
