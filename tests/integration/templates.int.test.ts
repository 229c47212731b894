import { waitFor } from '@mailer/testing'
import { simpleParser } from 'mailparser'
import { beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

const { client, relay } = useStack(['auth', 'email', 'gateway'], { dispatcher: true })
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let other: Awaited<ReturnType<typeof projectWithDomain>>

const WELCOME = {
  name: 'welcome',
  subject: 'Welcome, {{first_name}}!',
  html: '<h1>Hi {{first_name}}</h1><p>Your plan: {{{plan_html}}}</p>{{#if vip}}<p>VIP</p>{{/if}}<ul>{{#each items}}<li>{{this}}</li>{{/each}}</ul>',
  variables: [
    { name: 'first_name', required: true, example: 'Ann' },
    { name: 'plan_html', required: false },
  ],
}

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  other = await projectWithDomain(client, 'other')
})

const create = (body: unknown, key = acme.live) => client.post('/v1/templates', key, body)

describe('template CRUD and versions', () => {
  it('creates version 1 with text derived later, and rejects a taken name with 409', async () => {
    const r = await create(WELCOME)
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: expect.stringMatching(/^tmpl_[0-9A-Z]{26}$/),
      name: 'welcome',
      subject: WELCOME.subject,
      html: WELCOME.html,
      text: null,
      variables: [
        { name: 'first_name', required: true, example: 'Ann' },
        { name: 'plan_html', required: false, example: null },
      ],
      version: 1,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    const again = await create({ name: 'welcome', html: '<p>x</p>' })
    expect(again.status).toBe(409)
    expect(again.body.error).toMatchObject({ type: 'conflict', code: 'template_exists', param: 'name' })
    // Names are per project.
    expect((await create({ name: 'welcome', text: 'hi' }, other.live)).status).toBe(201)
  })

  it('rejects bad names, bad syntax and empty content with the contract errors', async () => {
    for (const [body, code, param] of [
      [{ name: 'Bad Name', html: 'x' }, 'invalid_body', 'name'],
      [{ name: '-x', html: 'x' }, 'invalid_body', 'name'],
      [{ name: 'a'.repeat(101), html: 'x' }, 'invalid_body', 'name'],
      [{ name: 'nobody' }, 'invalid_body', 'html'],
      [{ name: 'broken', html: '<p>{{#if x}}open</p>' }, 'invalid_template', 'html'],
      [{ name: 'broken', html: 'ok', subject: 'Hi {{name' }, 'invalid_template', 'subject'],
      [{ name: 'broken', html: 'ok', text: '{{> footer}}' }, 'invalid_template', 'text'],
      [{ name: 'broken', html: '{{uppercase name}}' }, 'invalid_template', 'html'],
      [{ name: 'broken', html: 'ok', text: 'Hi{{log email}}' }, 'invalid_template', 'text'],
      [{ name: 'huge', html: '{{a}}'.repeat(2_001) }, 'invalid_template', 'html'],
      [{ name: 'vars', html: 'x', variables: [{ name: 'a b' }] }, 'invalid_body', 'variables.0.name'],
      [
        { name: 'vars', html: 'x', variables: [{ name: 'a' }, { name: 'a' }] },
        'invalid_body',
        'variables.1.name',
      ],
    ] as const) {
      const r = await create(body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error).toMatchObject({ type: 'validation_error', code, param })
    }
    expect((await client.get('/v1/templates/broken', acme.live)).status).toBe(404)
  })

  it('makes every PATCH a new version, lists versions newest first and restores an old one', async () => {
    await create({ name: 'receipt', subject: 'Receipt', text: 'Total: {{total}}' })
    const v2 = await client.patch('/v1/templates/receipt', acme.live, { text: 'Sum: {{total}}' })
    expect(v2.status).toBe(200)
    expect(v2.body).toMatchObject({ version: 2, text: 'Sum: {{total}}', subject: 'Receipt' })
    const v3 = await client.patch('/v1/templates/receipt', acme.live, {
      subject: null,
      html: '<b>{{total}}</b>',
    })
    expect(v3.body).toMatchObject({ version: 3, subject: null, html: '<b>{{total}}</b>' })

    const stale = await client.patch('/v1/templates/receipt', acme.live, { text: 'x', version: 2 })
    expect(stale.status).toBe(409)
    expect(stale.body.error).toMatchObject({ code: 'template_conflict', param: 'version' })
    const bad = await client.patch('/v1/templates/receipt', acme.live, { html: '{{#each}}' })
    expect(bad.body.error).toMatchObject({ code: 'invalid_template', param: 'html' })
    const empty = await client.patch('/v1/templates/receipt', acme.live, { html: null, text: null })
    expect(empty.body.error).toMatchObject({ code: 'invalid_body', param: 'html' })
    expect((await client.patch('/v1/templates/receipt', acme.live, {})).status).toBe(400)

    const versions = await client.get('/v1/templates/receipt/versions?limit=2', acme.live)
    expect(versions.body.data.map((v: any) => v.version)).toEqual([3, 2])
    const rest = await client.get(
      `/v1/templates/receipt/versions?cursor=${versions.body.nextCursor}`,
      acme.live,
    )
    expect(rest.body).toMatchObject({
      data: [{ version: 1, text: 'Total: {{total}}', subject: 'Receipt' }],
      nextCursor: null,
    })

    const restored = await client.post('/v1/templates/receipt/restore', acme.live, { version: 1 })
    expect(restored.body).toMatchObject({
      version: 4,
      subject: 'Receipt',
      text: 'Total: {{total}}',
      html: null,
    })
    const missing = await client.post('/v1/templates/receipt/restore', acme.live, { version: 99 })
    expect(missing.status).toBe(404)
    expect(missing.body.error).toMatchObject({
      type: 'not_found',
      code: 'template_version_not_found',
      param: 'version',
    })
    expect((await client.get('/v1/templates/receipt', acme.live)).body.version).toBe(4)
    // Past what a version number can be: a 400 naming it, not a 500 from the database.
    const huge = await client.post('/v1/templates/receipt/restore', acme.live, { version: 2 ** 31 })
    expect(huge.status).toBe(400)
    expect(huge.body.error).toMatchObject({ code: 'invalid_body', param: 'version' })
  })

  it('lists without bodies, pages, filters by name and hides other projects', async () => {
    const all = await client.get('/v1/templates', acme.live)
    expect(all.status).toBe(200)
    expect(all.body.data.map((t: any) => t.name)).toEqual(['receipt', 'welcome'])
    expect(all.body.data[0]).not.toHaveProperty('html')
    const first = await client.get('/v1/templates?limit=1', acme.live)
    const second = await client.get(`/v1/templates?limit=1&cursor=${first.body.nextCursor}`, acme.live)
    expect(second.body.data.map((t: any) => t.name)).toEqual(['welcome'])
    expect((await client.get('/v1/templates?q=rece', acme.live)).body.data).toHaveLength(1)
    expect((await client.get('/v1/templates?limit=0', acme.live)).body.error).toMatchObject({
      code: 'invalid_query',
      param: 'limit',
    })
    expect((await client.get('/v1/templates', other.live)).body.data.map((t: any) => t.name)).toEqual([
      'welcome',
    ])
    // The admin mirror serves the same routes.
    const mirrored = await client.get('/v1/admin/projects/acme/templates/receipt', client.admin)
    expect(mirrored.body).toMatchObject({ name: 'receipt', version: 4 })
  })

  it('q matches names literally: _ and % are not wildcards', async () => {
    for (const name of ['order_paid', 'orderxpaid']) {
      expect((await create({ name, text: 'x' }, other.live)).status).toBe(201)
    }
    const names = async (q: string) =>
      (await client.get(`/v1/templates?q=${encodeURIComponent(q)}`, other.live)).body.data.map(
        (t: any) => t.name,
      )
    expect(await names('order_paid')).toEqual(['order_paid'])
    expect(await names('_')).toEqual(['order_paid'])
    expect(await names('%')).toEqual([])
    expect(await names('\\')).toEqual([])
    // Names hold no spaces: q is trimmed, and a blank one (a cleared search box) filters nothing.
    expect(await names(' order_paid ')).toEqual(['order_paid'])
    const all = await names('')
    expect(all).toEqual(expect.arrayContaining(['order_paid', 'orderxpaid']))
    expect(await names('  ')).toEqual(all)
  })

  it('deletes a template with its versions; the name can be used again', async () => {
    await create({ name: 'gone', text: 'x' })
    const del = await client.del('/v1/templates/gone', acme.live)
    expect(del.body).toEqual({ id: expect.stringMatching(/^tmpl_/), name: 'gone', deleted: true })
    expect((await client.get('/v1/templates/gone', acme.live)).body.error).toMatchObject({
      code: 'template_not_found',
    })
    expect((await client.del('/v1/templates/gone', acme.live)).status).toBe(404)
    expect((await client.get('/v1/templates/gone/versions', acme.live)).status).toBe(404)
    expect((await create({ name: 'gone', text: 'y' })).body.version).toBe(1)
  })
})

describe('rendering', () => {
  it('renders with data, escaping {{x}} in html, falling back to examples, deriving text', async () => {
    const r = await client.post('/v1/templates/welcome/render', acme.live, {
      data: { first_name: 'Bo & <Co>', plan_html: '<i>Pro</i>', vip: true, items: ['a', 'b'] },
    })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      subject: 'Welcome, Bo & <Co>!',
      html: '<h1>Hi Bo &amp; &lt;Co&gt;</h1><p>Your plan: <i>Pro</i></p><p>VIP</p><ul><li>a</li><li>b</li></ul>',
      text: 'Hi Bo & <Co>\n\nYour plan: Pro\n\nVIP\n\n- a\n- b',
    })
    const preview = await client.post('/v1/templates/welcome/render', acme.live, {})
    expect(preview.body.subject).toBe('Welcome, Ann!')
    // The body is optional (none is {}); JSON null is a body it does not take, as on every such route.
    expect((await client.post('/v1/templates/welcome/render', acme.live)).body.subject).toBe('Welcome, Ann!')
    const nul = await client.post('/v1/templates/welcome/render', acme.live, null)
    expect(nul.status).toBe(400)
    expect(nul.body.error.code).toBe('invalid_body')
  })

  it('enforces required variables and data types', async () => {
    await create({ name: 'strict', text: 'Code {{code}}', variables: [{ name: 'code', required: true }] })
    const r = await client.post('/v1/templates/strict/render', acme.live, { data: {} })
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ code: 'invalid_template_data', param: 'data.code' })
    const wrong = await client.post('/v1/templates/strict/render', acme.live, { data: [1] })
    expect(wrong.body.error).toMatchObject({ code: 'invalid_body', param: 'data' })
    expect((await client.post('/v1/templates/nope/render', acme.live, {})).body.error.code).toBe(
      'template_not_found',
    )
  })
  it('a variable path through __proto__ is only data: a preview leaves the service answering', async () => {
    await create({
      name: 'proto',
      text: 'Hi {{who}}',
      variables: [
        { name: '__proto__.polluted', example: 'yes' },
        { name: 'who', example: 'Ann' },
      ],
    })
    try {
      const r = await client.post('/v1/templates/proto/render', acme.live, {})
      expect(r.status).toBe(200)
      expect(r.body.text).toBe('Hi Ann')
      // The services of this file run in this process: every object would have had the property.
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect((await client.get('/v1/templates/proto', acme.live)).status).toBe(200)
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted
    }
  })

  it('refuses data that would make a render repeat for hours, and keeps serving', async () => {
    const loops =
      '{{#each xs}}{{#each @root.xs}}{{#each @root.xs}}{{#each @root.xs}}.{{/each}}{{/each}}{{/each}}{{/each}}'
    await create({ name: 'loops', subject: 'Loops', html: `<p>${loops}</p>` })
    // 1,000 items, 4 KB of JSON: 10^12 iterations without a bound.
    const xs = Array.from({ length: 1000 }, (_, i) => i)
    const preview = await client.post('/v1/templates/loops/render', acme.live, { data: { xs } })
    expect(preview.status).toBe(400)
    expect(preview.body.error).toMatchObject({ code: 'invalid_template_data', param: 'data' })
    for (const key of [acme.live, acme.test]) {
      const sent = await client.post(
        '/v1/emails',
        key,
        email(acme.from, { html: undefined, subject: undefined, template: 'loops', data: { xs } }),
      )
      expect(sent.status).toBe(400)
      expect(sent.body.error).toMatchObject({ code: 'invalid_template_data', param: 'data' })
    }
    const small = await client.post('/v1/templates/loops/render', acme.live, { data: { xs: [1, 2] } })
    expect(small.body.html).toBe('<p>................</p>')
  })
})

describe('sending with a template', () => {
  it('delivers the rendered template and records its name and version on the email', async () => {
    const sent = await client.post('/v1/emails', acme.live, {
      from: acme.from,
      to: 'ann@example.com',
      template: 'welcome',
      data: { first_name: 'Ann <3', plan_html: '<b>Gold</b>', items: ['x'] },
    })
    expect(sent.status).toBe(202)
    const id = sent.body.id
    const delivered = await waitFor(() => relay.forEmail(id)[0], { timeoutMs: 15_000, what: 'delivery' })
    const mail = await simpleParser(delivered.raw)
    expect(mail.subject).toBe('Welcome, Ann <3!')
    expect(mail.html).toContain('<h1>Hi Ann &lt;3</h1><p>Your plan: <b>Gold</b></p><ul><li>x</li></ul>')
    expect(mail.text?.trim()).toBe('Hi Ann <3\n\nYour plan: Gold\n\n- x')
    const record = await client.get(`/v1/emails/${id}`, acme.live)
    expect(record.body).toMatchObject({
      template: 'welcome',
      templateVersion: 1,
      subject: 'Welcome, Ann <3!',
    })
  })

  it('renders the new version right after a PATCH, and explicit subject/html win', async () => {
    await client.patch('/v1/templates/welcome', acme.live, { html: '<p>v2 for {{first_name}}</p>' })
    const sent = await client.post('/v1/emails', acme.live, {
      from: acme.from,
      to: 'ann@example.com',
      subject: 'My own subject',
      template: 'welcome',
      data: { first_name: 'Ann' },
    })
    const id = sent.body.id
    const delivered = await waitFor(() => relay.forEmail(id)[0], { timeoutMs: 15_000, what: 'delivery' })
    const mail = await simpleParser(delivered.raw)
    expect(mail.subject).toBe('My own subject')
    expect(mail.html).toContain('<p>v2 for Ann</p>')
    expect((await client.get(`/v1/emails/${id}`, acme.live)).body.templateVersion).toBe(2)
  })

  it('an explicit html in the send also replaces the text the template would derive from its own html', async () => {
    await create({ name: 'digest', subject: 'Digest', html: '<p>Template body for {{first_name}}</p>' })
    const sent = await client.post('/v1/emails', acme.live, {
      from: acme.from,
      to: 'ann@example.com',
      template: 'digest',
      data: { first_name: 'Ann' },
      html: '<p>My own body</p>',
    })
    expect(sent.status).toBe(202)
    const delivered = await waitFor(() => relay.forEmail(sent.body.id)[0], {
      timeoutMs: 15_000,
      what: 'delivery',
    })
    const mail = await simpleParser(delivered.raw)
    expect(mail.subject).toBe('Digest')
    expect(mail.html).toContain('<p>My own body</p>')
    // The text alternative says what the html says, never the template's replaced body.
    expect(mail.text?.trim()).toBe('My own body')
    const content = await client.get(`/v1/emails/${sent.body.id}/content`, acme.live)
    expect(content.body.text).toBe('My own body')
  })

  it('rejects missing required data and unknown templates, for test keys too', async () => {
    for (const key of [acme.live, acme.test]) {
      const r = await client.post(
        '/v1/emails',
        key,
        email(acme.from, { html: undefined, subject: undefined, template: 'welcome', data: {} }),
      )
      expect(r.status).toBe(400)
      expect(r.body.error).toMatchObject({
        type: 'validation_error',
        code: 'invalid_template_data',
        param: 'data.first_name',
      })
      const unknown = await client.post(
        '/v1/emails',
        key,
        email(acme.from, { html: undefined, template: 'nope' }),
      )
      expect(unknown.status).toBe(404)
      expect(unknown.body.error).toMatchObject({ code: 'template_not_found', param: 'template' })
    }
    const ok = await client.post(
      '/v1/emails',
      acme.test,
      email(acme.from, {
        html: undefined,
        subject: undefined,
        template: 'welcome',
        data: { first_name: 'T' },
      }),
    )
    expect(ok.status).toBe(200)
    expect(ok.body.status).toBe('test')
    // Another project's template of the same name is its own.
    const theirs = await client.post(
      '/v1/emails',
      other.test,
      email(other.from, { html: undefined, subject: 'S', template: 'welcome' }),
    )
    expect(theirs.status).toBe(200)
  })

  it('refuses data that renders html and text empty: an email needs a body', async () => {
    expect((await create({ name: 'bare', subject: 'S', html: '{{{body}}}' })).status).toBe(201)
    const send = (data: unknown) =>
      client.post('/v1/emails', acme.test, email(acme.from, { html: undefined, template: 'bare', data }))
    const empty = await send({ body: '' })
    expect([empty.status, empty.body.error]).toEqual([
      400,
      {
        type: 'validation_error',
        code: 'invalid_template_data',
        message: 'The template renders empty html and text with this data',
        param: 'data',
      },
    ])
    expect((await send({ body: '<p>x</p>' })).status).toBe(200)
  })

  it('renders per item in a batch, each item with its own errors', async () => {
    const r = await client.post('/v1/emails/batch', acme.live, [
      { from: acme.from, to: 'a@example.com', template: 'welcome', data: { first_name: 'A' } },
      { from: acme.from, to: 'b@example.com', template: 'welcome', data: {} },
      { from: acme.from, to: 'c@example.com', template: 'welcome', data: { first_name: 'C' } },
    ])
    expect(r.status).toBe(200)
    expect(r.body.data[0]).toMatchObject({ status: 'queued' })
    expect(r.body.data[1].error).toMatchObject({ code: 'invalid_template_data', param: 'data.first_name' })
    expect(r.body.data[2]).toMatchObject({ status: 'queued' })
    const third = await waitFor(() => relay.forEmail(r.body.data[2].id)[0], {
      timeoutMs: 15_000,
      what: 'delivery',
    })
    expect((await simpleParser(third.raw)).html).toContain('v2 for C')
  })
})
