import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// The accepting request's X-Request-Id is kept with each email, so the dispatcher's log lines
// about it (claim, send, outcome) carry the id the caller saw in its 202 (docs/api.md).
const { te, client } = useStack(['auth', 'email', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
})

const requestIdOf = async (id: string) =>
  (await sql(te, 'SELECT request_id FROM emails WHERE id = $1', [id]))[0]?.request_id

describe("an email's request id", () => {
  it("is the caller's X-Request-Id, for a send and for each item of a batch", async () => {
    const one = await client.post('/v1/emails', acme.live, email(acme.from), { 'x-request-id': 'trace-one' })
    expect(one.status).toBe(202)
    expect(await requestIdOf(one.body.id)).toBe('trace-one')

    const batch = await client.post('/v1/emails/batch', acme.live, [email(acme.from), email(acme.from)], {
      'x-request-id': 'trace-batch',
    })
    expect(batch.status).toBe(200)
    for (const item of batch.body.data) expect(await requestIdOf(item.id)).toBe('trace-batch')
  })

  it('is the generated one the answer carries when the caller sent none', async () => {
    const r = await client.post('/v1/emails', acme.live, email(acme.from))
    const echoed = r.headers.get('x-request-id')
    expect(echoed).toMatch(/^req_/)
    expect(await requestIdOf(r.body.id)).toBe(echoed)
  })
})
