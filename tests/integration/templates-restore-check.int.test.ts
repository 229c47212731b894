import { beforeAll, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'
import { sql } from '../support/webhooks.js'

const { te, client } = useStack(['auth', 'email', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
})

it('a restore checks the old content as a save does: a version no render can pass is refused', async () => {
  const created = await client.post('/v1/templates', acme.live, {
    name: 'legacy',
    subject: 'S',
    html: '<p>ok</p>',
  })
  expect(created.status).toBe(201)
  // Version 1 as an earlier release kept it, before {{#if}} without its argument was refused at save.
  await sql(te, "UPDATE template_versions SET html = '<p>{{#if}}x{{/if}}</p>' WHERE template_id = $1", [
    created.body.id,
  ])
  expect((await client.patch('/v1/templates/legacy', acme.live, { html: '<p>v2</p>' })).body.version).toBe(2)

  const restored = await client.post('/v1/templates/legacy/restore', acme.live, { version: 1 })
  expect(restored.status).toBe(400)
  expect(restored.body.error).toMatchObject({ code: 'invalid_template', param: 'html' })
  const current = await client.get('/v1/templates/legacy', acme.live)
  expect(current.body).toMatchObject({ version: 2, html: '<p>v2</p>' })
  const sent = await client.post(
    '/v1/emails',
    acme.test,
    email(acme.from, { html: undefined, subject: undefined, template: 'legacy' }),
  )
  expect(sent.status).toBe(200)
})
