import { connect } from 'nats'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// A request larger than the NATS server's max_payload (1 MB unless configured: docs/operations.md)
// cannot cross the bus: it is 413 payload_too_large, not a 500. The gateway's own body limit is set
// above it here, so that the bus is what refuses.
const { te, stack, client } = useStack(['auth', 'email'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let maxPayload: number

beforeAll(async () => {
  const nc = await connect({ servers: te.natsUrl })
  maxPayload = nc.info!.max_payload
  await nc.close()
  await stack.start('gateway', { MAX_BODY_BYTES: String(maxPayload + 1024 * 1024) })
  acme = await projectWithDomain(client, 'acme')
})

describe('the bus message limit', () => {
  it('a send larger than NATS max_payload is 413 payload_too_large, and nothing is stored', async () => {
    const r = await client.post(
      '/v1/emails',
      acme.live,
      email(acme.from, { text: 'x'.repeat(maxPayload + 1000) }),
    )
    expect(r.status).toBe(413)
    expect(r.body.error).toMatchObject({ type: 'validation_error', code: 'payload_too_large' })
    expect(r.body.error.message).toContain(`NATS max_payload, ${maxPayload} bytes`)
    expect((await sql(te, 'SELECT count(*)::int AS n FROM emails'))[0].n).toBe(0)
    // A send that fits goes through as usual.
    expect((await client.post('/v1/emails', acme.live, email(acme.from))).status).toBe(202)
  })
})
