import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { api } from '../support/http.js'
import { Stack } from '../support/stack.js'

// Keys named like Object.prototype's members, as a JSON body carries them: JSON.parse makes
// `__proto__` an own key (an object literal would set the prototype instead).
const te = useTestEnv()
const stack = new Stack(te)
let client: ReturnType<typeof api>
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  await stack.startAll(['auth', 'email', 'gateway'])
  client = api(stack.gatewayUrl)
  acme = await projectWithDomain(client, 'acme', 'acme.test')
})
afterAll(() => stack.stopAll())

const json = (text: string) => JSON.parse(text) as Record<string, unknown>

describe('a send: tags and headers named __proto__', () => {
  it('a tag named __proto__ is 400 invalid_body naming it, not silently dropped', async () => {
    const r = await client.post(
      '/v1/emails',
      acme.live,
      email(acme.from, { tags: json('{"__proto__":"x","plan":"pro"}') }),
    )
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ code: 'invalid_body', param: 'tags.__proto__' })
  })

  it('a header named __proto__ is 400 invalid_header naming it, not silently dropped', async () => {
    const r = await client.post(
      '/v1/emails',
      acme.live,
      email(acme.from, { headers: json('{"__proto__":"x","X-Campaign":"spring"}') }),
    )
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ code: 'invalid_header', param: 'headers.__proto__' })
  })

  it('other names of Object.prototype are ordinary tags and headers', async () => {
    const r = await client.post(
      '/v1/emails',
      acme.live,
      email(acme.from, {
        tags: { constructor: 'a', toString: 'b', hasOwnProperty: 'c' },
        headers: { constructor: 'x', valueOf: 'y' },
      }),
    )
    expect(r.status).toBe(202)
    const got = await client.get(`/v1/emails/${r.body.id}`, acme.live)
    expect(got.body.tags).toEqual({ constructor: 'a', toString: 'b', hasOwnProperty: 'c' })
    const content = await client.get(`/v1/emails/${r.body.id}/content`, acme.live)
    expect(content.body.headers).toEqual({ constructor: 'x', valueOf: 'y' })
  })
})
