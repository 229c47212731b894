import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api } from '../support/http.js'
import { PrivateNats } from '../support/infra.js'
import { ADMIN_KEY, Stack } from '../support/stack.js'

/**
 * A NATS server that needs a login, given the way docs/operations.md says: in NATS_URL
 * (`nats://user:pass@host:4222`, or `nats://token@host:4222`). The services must log in with it.
 */
const te = useTestEnv()
let withPassword: PrivateNats
let withToken: PrivateNats
let stacks: Stack[] = []

beforeAll(async () => {
  withPassword = await PrivateNats.start(['--user', 'mailer', '--pass', 's3cret/+&'])
  withToken = await PrivateNats.start(['--auth', 'tok3n'])
}, 60_000)
afterAll(async () => {
  for (const s of stacks) await s.stopAll()
  await withPassword.stop()
  await withToken.stop()
})

const userUrl = (n: PrivateNats) => `nats://mailer:${encodeURIComponent('s3cret/+&')}@127.0.0.1:${n.port}`
const tokenUrl = (n: PrivateNats) => `nats://tok3n@127.0.0.1:${n.port}`

describe('NATS credentials in NATS_URL', () => {
  it.each([
    ['user and password', () => userUrl(withPassword)],
    ['token', () => tokenUrl(withToken)],
  ])('services log in with the %s of the URL and answer requests', async (_what, url) => {
    const stack = new Stack(te, { NATS_URL: url() })
    stacks.push(stack)
    await stack.startAll(['auth', 'gateway'])
    const res = await api(stack.gatewayUrl).get('/v1/admin/projects', ADMIN_KEY)
    expect(res.status).toBe(200)
    await stack.stopAll()
    stacks = stacks.filter((s) => s !== stack)
  })
})
