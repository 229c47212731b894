import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

/*
 * A 404 for something the path named carries `param`, the name of that path parameter
 * (contract.md: `param` is the offending parameter). Emails, webhooks, projects and keys said
 * `param: 'id'` (or `slug`); templates, contacts, audiences and broadcasts said none.
 */
const { client } = useStack(['auth', 'email', 'webhook', 'broadcast', 'gateway'])
let acme: Awaited<ReturnType<typeof createProject>>
let webhookId = ''

const ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV'

beforeAll(async () => {
  acme = await createProject(client, 'acme')
  webhookId = (await client.post('/v1/webhooks', acme.live, { url: 'https://example.com/hook' })).body.id
  const t = await client.post('/v1/templates', acme.live, {
    name: 'welcome',
    subject: 'Hi',
    html: '<p>Hi</p>',
  })
  expect(t.status).toBe(201)
})

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

/*
 * Messages quoted path parameters as sent: a key pasted where a slug or id belongs came back in
 * the message (`No project with slug 'fs_live_…'`), which clients print and log. A value is now
 * quoted only when it has the form of what it names (an id of its kind, a slug, a template name,
 * at most 32 characters, not a secret's prefix); otherwise the message says "that id".
 */
describe('a not-found message', () => {
  const KEY = `fs_live_${'Ab3'.repeat(10)}xy`
  const HEX = 'ab'.repeat(32)

  it('never quotes a key, a secret or a malformed value sent where an id, slug or name belongs', async () => {
    const cases: [string, string, string, string][] = [
      [client.admin, 'GET', `/v1/admin/projects/${KEY}`, 'No project with that slug'],
      [client.admin, 'GET', `/v1/admin/projects/${KEY}/emails`, 'No project with that slug'],
      [client.admin, 'GET', `/v1/admin/projects/${HEX}`, 'No project with that slug'],
      [client.admin, 'GET', `/v1/admin/api-keys?project=${'a'.repeat(40)}`, 'No project with that slug'],
      [client.admin, 'GET', `/v1/admin/events?project=${'a'.repeat(40)}`, 'No project with that slug'],
      [client.admin, 'GET', `/v1/admin/emails?project=${'a'.repeat(40)}`, 'No project with that slug'],
      [client.admin, 'DELETE', `/v1/admin/api-keys/${KEY}`, 'No API key with that id'],
      [client.admin, 'GET', `/v1/admin/emails/${KEY}`, 'No email with that id'],
      [acme.live, 'GET', `/v1/emails/${KEY}`, 'No email with that id'],
      [acme.live, 'GET', `/v1/emails/${KEY}/content`, 'No email with that id'],
      [acme.live, 'DELETE', `/v1/webhooks/whsec_${'Ab3'.repeat(10)}xy`, 'No webhook with that id'],
      [acme.live, 'GET', `/v1/templates/${HEX}`, 'No template with that name'],
      [acme.live, 'GET', `/v1/templates/${KEY.toLowerCase()}`, 'No template with that name'],
      [acme.live, 'GET', `/v1/contacts/${KEY}`, 'No contact with that id'],
      [acme.live, 'GET', `/v1/audiences/${KEY}`, 'No audience with that id'],
      [acme.live, 'GET', `/v1/broadcasts/${KEY}`, 'No broadcast with that id'],
      [
        acme.live,
        'POST',
        `/v1/webhooks/${webhookId}/deliveries/${KEY}/retry`,
        'No delivery with that id for this webhook',
      ],
    ]
    for (const [key, method, path, message] of cases) {
      const r = await client.call(method, path, { key })
      expect({ path, status: r.status, message: r.body?.error?.message }).toEqual({
        path,
        status: 404,
        message,
      })
    }
  })

  it('quotes an id, slug or name of the right form, so a typo can be seen', async () => {
    const cases: [string, string, string][] = [
      [client.admin, '/v1/admin/projects/acme-prd', "No project with slug 'acme-prd'"],
      [acme.live, `/v1/emails/email_${ULID}`, `No email with id 'email_${ULID}'`],
      [acme.live, '/v1/templates/welcom', "No template with name 'welcom'"],
      [acme.live, `/v1/contacts/ct_${ULID}`, `No contact with id 'ct_${ULID}'`],
      [acme.live, `/v1/broadcasts/bc_${ULID}`, `No broadcast with id 'bc_${ULID}'`],
    ]
    for (const [key, path, message] of cases) {
      const r = await client.get(path, key)
      expect({ path, message: r.body?.error?.message }).toEqual({ path, message })
    }
  })

  it('for a route that does not exist, names no part of the path', async () => {
    const r = await client.get(`/v1/${KEY}`, acme.live)
    expect(r.body.error.code).toBe('route_not_found')
    expect(r.body.error.message).not.toContain(KEY)
    const put = await client.call('PUT', `/v1/emails/${KEY}`, { key: acme.live })
    expect(put.body.error.code).toBe('method_not_allowed')
    expect(put.body.error.message).not.toContain(KEY)
  })
})
