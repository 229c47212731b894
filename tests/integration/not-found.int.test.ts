import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api, createProject } from '../support/http.js'
import { Stack } from '../support/stack.js'

/*
 * A 404 for something the path named carries `param`, the name of that path parameter
 * (contract.md: `param` is the offending parameter). Emails, webhooks, projects and keys said
 * `param: 'id'` (or `slug`); templates, contacts, audiences and broadcasts said none.
 */
const te = useTestEnv()
const stack = new Stack(te)
let client: ReturnType<typeof api>
let acme: Awaited<ReturnType<typeof createProject>>
let webhookId = ''

const ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV'

beforeAll(async () => {
  await stack.startAll(['auth', 'email', 'webhook', 'broadcast', 'gateway'])
  client = api(stack.gatewayUrl)
  acme = await createProject(client, 'acme')
  webhookId = (await client.post('/v1/webhooks', acme.live, { url: 'https://example.com/hook' })).body.id
  const t = await client.post('/v1/templates', acme.live, {
    name: 'welcome',
    subject: 'Hi',
    html: '<p>Hi</p>',
  })
  expect(t.status).toBe(201)
})
afterAll(() => stack.stopAll())

type Case = [method: string, path: string, code: string, param: string, body?: unknown]

const projectCases = (): Case[] => [
  ['GET', `/v1/emails/email_${ULID}`, 'email_not_found', 'id'],
  ['DELETE', `/v1/webhooks/wh_${ULID}`, 'webhook_not_found', 'id'],
  ['POST', `/v1/webhooks/${webhookId}/deliveries/whd_${ULID}/retry`, 'delivery_not_found', 'deliveryId'],
  ['GET', '/v1/templates/nope', 'template_not_found', 'name'],
  ['GET', '/v1/templates/Not%20A%20Name', 'template_not_found', 'name'],
  ['PATCH', '/v1/templates/nope', 'template_not_found', 'name', { subject: 'x' }],
  ['DELETE', '/v1/templates/nope', 'template_not_found', 'name'],
  ['GET', '/v1/templates/nope/versions', 'template_not_found', 'name'],
  ['POST', '/v1/templates/nope/render', 'template_not_found', 'name', { data: {} }],
  ['POST', '/v1/templates/welcome/restore', 'template_version_not_found', 'version', { version: 9 }],
  ['GET', `/v1/contacts/ct_${ULID}`, 'contact_not_found', 'id'],
  ['PATCH', `/v1/contacts/ct_${ULID}`, 'contact_not_found', 'id', { firstName: 'x' }],
  ['DELETE', `/v1/contacts/ct_${ULID}`, 'contact_not_found', 'id'],
  ['GET', `/v1/audiences/aud_${ULID}`, 'audience_not_found', 'id'],
  ['PATCH', `/v1/audiences/aud_${ULID}`, 'audience_not_found', 'id', { name: 'x' }],
  ['DELETE', `/v1/audiences/aud_${ULID}`, 'audience_not_found', 'id'],
  ['GET', `/v1/audiences/aud_${ULID}/contacts`, 'audience_not_found', 'id'],
  ['GET', `/v1/broadcasts/bc_${ULID}`, 'broadcast_not_found', 'id'],
  ['DELETE', `/v1/broadcasts/bc_${ULID}`, 'broadcast_not_found', 'id'],
  ['POST', `/v1/broadcasts/bc_${ULID}/cancel`, 'broadcast_not_found', 'id'],
]

const adminCases: Case[] = [
  ['GET', '/v1/admin/projects/nope', 'project_not_found', 'slug'],
  ['GET', '/v1/admin/projects/nope/contacts', 'project_not_found', 'slug'],
  ['DELETE', `/v1/admin/api-keys/key_${ULID}`, 'api_key_not_found', 'id'],
  ['GET', '/v1/admin/api-keys?project=nope', 'project_not_found', 'project'],
  ['GET', '/v1/admin/events?project=nope', 'project_not_found', 'project'],
]

describe('a 404 for what the path named', () => {
  it('carries param naming the path parameter, on every resource', async () => {
    const mirror: Case[] = [
      // The admin mirror answers as the project route does.
      ['GET', '/v1/admin/projects/acme/templates/nope', 'template_not_found', 'name'],
      ['GET', `/v1/admin/projects/acme/broadcasts/bc_${ULID}`, 'broadcast_not_found', 'id'],
    ]
    const cases: [string, Case][] = [
      ...projectCases().map((c): [string, Case] => [acme.live, c]),
      ...[...adminCases, ...mirror].map((c): [string, Case] => [client.admin, c]),
    ]
    for (const [key, [method, path, code, param, body]] of cases) {
      const r = await client.call(method, path, { key, ...(body !== undefined ? { body } : {}) })
      expect({ method, path, status: r.status, error: r.body?.error }).toEqual({
        method,
        path,
        status: 404,
        error: { type: 'not_found', code, message: expect.any(String), param },
      })
    }
  })
})
