import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { api } from '../support/http.js'
import { Stack } from '../support/stack.js'

/*
 * Query parameters are plain strings (interface.md), one each. Express reads `project[]=alpha` as
 * a parameter named `project[]` and `project=a&project=b` as a list: the bracketed copy of a known
 * parameter used to be ignored as unknown, so `/v1/admin/analytics?project[]=alpha` answered
 * every project summed while the admin believed they saw alpha's. Both are 400 `invalid_query`
 * naming the parameter, on every route with a query.
 */
const te = useTestEnv()
const stack = new Stack(te)
let client: ReturnType<typeof api>
let alpha: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  await stack.startAll(['auth', 'email', 'analytics', 'gateway'])
  client = api(stack.gatewayUrl)
  alpha = await projectWithDomain(client, 'alpha')
})
afterAll(() => stack.stopAll())

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
