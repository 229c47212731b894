import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

/*
 * Query parameters are plain strings (interface.md), one each. Express reads `project[]=alpha` as
 * a parameter named `project[]` and `project=a&project=b` as a list: the bracketed copy of a known
 * parameter used to be ignored as unknown, so `/v1/admin/analytics?project[]=alpha` answered
 * every project summed while the admin believed they saw alpha's. Both are 400 `invalid_query`
 * naming the parameter, on every route with a query.
 */
const { client } = useStack(['auth', 'email', 'analytics', 'webhook', 'gateway'])
let alpha: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  alpha = await projectWithDomain(client, 'alpha')
})

const refused = async (path: string, key: string, param: string) => {
  const r = await client.get(path, key)
  expect({ path, status: r.status }).toEqual({ path, status: 400 })
  expect(r.body.error).toMatchObject({ code: 'invalid_query', param })
}

describe('a repeated or bracketed query parameter', () => {
  it('is 400 invalid_query naming it on GET /v1/admin/analytics, instead of all projects summed', async () => {
    expect((await client.get('/v1/admin/analytics?project=alpha', client.admin)).status).toBe(200)
    await refused('/v1/admin/analytics?project[]=alpha', client.admin, 'project')
    await refused('/v1/admin/analytics?project%5B%5D=alpha', client.admin, 'project')
    await refused('/v1/admin/analytics?project[0]=alpha', client.admin, 'project')
    await refused('/v1/admin/analytics?project=alpha&project=beta', client.admin, 'project')
    await refused('/v1/admin/analytics?project=alpha&project=alpha', client.admin, 'project')
    await refused('/v1/admin/analytics?range[]=7d', client.admin, 'range')
    await refused('/v1/admin/analytics?range=7d&range=90d', client.admin, 'range')
    await refused('/v1/analytics?interval[]=hour&range=7d', alpha.live, 'interval')
  })

  it('is 400 on the other list routes too, and unknown parameters are still ignored', async () => {
    await refused('/v1/emails?status[]=delivered', alpha.live, 'status')
    await refused('/v1/emails?limit=1&limit=2', alpha.live, 'limit')
    await refused('/v1/admin/emails?project[]=alpha', client.admin, 'project')
    await refused('/v1/admin/projects/alpha/emails?to[]=a@example.com', client.admin, 'to')
    await refused('/v1/domains?refresh[]=true', alpha.live, 'refresh')
    expect((await client.get('/v1/emails?utm_source[]=x&other=1&other=2', alpha.live)).status).toBe(200)
  })
})

/*
 * `limit` was read with Number(): `0x10` (16), `1e1` (10), ` 5`, `+5`, `5.0` and `0b11` were all
 * taken as page sizes. Only digits are a number here; anything else is 400 invalid_query `limit`.
 */
describe('limit', () => {
  const notDecimal = ['0x10', '1e1', ' 5', '5 ', '+5', '5.0', '0b11', '0o7', '-0', '', '1_0', '５']

  it('takes only plain decimal digits, on every list route', async () => {
    for (const path of [
      '/v1/emails',
      '/v1/events',
      '/v1/admin/projects/alpha/emails',
      '/v1/admin/emails',
      '/v1/admin/events',
      '/v1/admin/suppressions',
    ]) {
      const key = path.startsWith('/v1/admin') ? client.admin : alpha.live
      for (const v of notDecimal) await refused(`${path}?limit=${encodeURIComponent(v)}`, key, 'limit')
      const ok = await client.get(`${path}?limit=7`, key)
      expect({ path, status: ok.status }).toEqual({ path, status: 200 })
      expect((await client.get(`${path}?limit=007`, key)).status).toBe(200)
    }
  })

  it("names what it takes in the message, not JavaScript's number rules", async () => {
    const r = await client.get('/v1/emails?limit=0x10', alpha.live)
    expect(r.body.error.message).toBe('limit: must be a whole number from 1 to 100, in digits')
    const admin = await client.get('/v1/admin/suppressions?limit=1e1', client.admin)
    expect(admin.body.error.message).toBe('limit: must be a whole number from 1 to 200, in digits')
  })
})
