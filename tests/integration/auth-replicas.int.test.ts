import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api, createProject } from '../support/http.js'
import { Stack } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// Two gateways and two auth replicas, as a deployment runs them: a key both gateways have verified
// (and so hold in their 5 s caches) is refused on the very next request at the other gateway once
// it is revoked, or its project disabled, through the first (interface.md part 3: "effective on the
// next request"). Auth broadcasts the change before it answers; every replica drops the key on it.
const { te, client } = useStack(['auth', 'gateway'])
const other = new Stack(te)
beforeAll(async () => {
  await other.start('auth')
  await other.start('gateway')
})
afterAll(() => other.stopAll())

describe('a revoke or a project disable across replicas', () => {
  it('holds on the next request at another gateway, whatever either cached', async () => {
    const b = api(() => other.gatewayUrl)
    for (let i = 0; i < 10; i++) {
      const p = await createProject(client, `replica-${i}`)
      for (let j = 0; j < 3; j++) {
        expect((await b.get('/v1/me', p.live)).status).toBe(200)
        expect((await client.get('/v1/me', p.live)).status).toBe(200)
      }
      if (i % 2 === 0) {
        expect((await client.del(`/v1/admin/api-keys/${p.liveId}`, client.admin)).status).toBe(200)
        const r = await b.get('/v1/me', p.live)
        expect([r.status, r.body.error?.code]).toEqual([401, 'revoked_api_key'])
      } else {
        const off = await client.patch(`/v1/admin/projects/replica-${i}`, client.admin, { disabled: true })
        expect(off.status).toBe(200)
        const r = await b.get('/v1/me', p.live)
        expect([r.status, r.body.error?.code]).toEqual([403, 'project_disabled'])
      }
    }
  })
})
