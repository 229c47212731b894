import { trackingGrowth } from '@mailer/links'
import { beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// Click tracking makes each link a signed one at dispatch: the size limit holds for the email as
// it is sent, so it is checked at accept with the links as they will be (MAX_MESSAGE_BYTES small
// here so that such an html crosses the test NATS server's 1 MiB max_payload).
const LIMIT = 64 * 1024
const PUBLIC_URL = 'https://links.mailer.test'
const { client } = useStack(['auth', 'email', 'gateway'], {
  env: { MAX_MESSAGE_BYTES: String(LIMIT), PUBLIC_URL },
})
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
})

const links = (n: number) => '<a href=https://s.io/>x</a>'.repeat(n)
const send = (body: Record<string, unknown>) => client.post('/v1/emails', acme.live, email(acme.from, body))

describe('the size limit with tracking', () => {
  it('refuses an html that fits as given but not once its links are tracked: 400 payload_too_large', async () => {
    // 42 KB of links; tracked (the first 1,000 of them), about 150 KB.
    const html = links(1500)
    expect(Buffer.byteLength(html)).toBeLessThan(LIMIT)
    const tracked = await send({ html, trackClicks: true })
    expect(tracked.status).toBe(400)
    expect(tracked.body.error).toMatchObject({
      type: 'validation_error',
      code: 'payload_too_large',
      param: 'html',
    })
    expect(tracked.body.error.message).toContain('once its links are tracked')
    // In a batch, the item carries the same error.
    const batch = await client.post('/v1/emails/batch', acme.live, [
      email(acme.from, { html, trackClicks: true }),
      email(acme.from, { html }),
    ])
    expect(batch.body.data[0].error).toMatchObject({ code: 'payload_too_large', param: 'html' })
    expect(batch.body.data[1]).toMatchObject({ status: 'queued' })
    // Without click tracking the same html is sent; an open pixel alone adds a few hundred bytes.
    expect((await send({ html })).status).toBe(202)
    expect((await send({ html, trackOpens: true })).status).toBe(202)
  })

  it('holds to the byte for the email as the dispatcher will write it', async () => {
    const base = `${links(300)}<p></p>`
    const growth = trackingGrowth(base, {
      publicUrl: PUBLIC_URL,
      emailId: `email_${'0'.repeat(26)}`,
      clicks: true,
      opens: true,
    })
    const pad = LIMIT - Buffer.byteLength(base) - growth
    const html = (extra: number) => `${links(300)}<p>${'y'.repeat(pad + extra)}</p>`
    expect((await send({ html: html(0), trackClicks: true, trackOpens: true })).status).toBe(202)
    const over = await send({ html: html(1), trackClicks: true, trackOpens: true })
    expect(over.status).toBe(400)
    expect(over.body.error).toMatchObject({ code: 'payload_too_large', param: 'html' })
  })
})
