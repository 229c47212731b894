import { beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// One ordinary-sized request must not hold the email service: what one {{…}} may hold is bounded
// when a template or broadcast is saved, and a render stops at its output limit and its work
// budget (MAX_RENDER_STEPS) instead of running for seconds or exhausting the heap.
const { client } = useStack(['auth', 'email', 'broadcast', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let audienceId: string

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme', 'news.acme.test')
  audienceId = (await client.post('/v1/audiences', acme.live, { name: 'Everyone' })).body.id
})

let nested = 'a'
for (let i = 0; i < 3000; i++) nested = `(lookup ${nested} "b")`
// Under the gateway's 1 MB body limit, as the audit's 45,000 were not with that limit's bytes.
const hash = Array.from({ length: 30_000 }, (_, i) => `k${i}=(lookup a "b")`).join(' ')
const heavy: [string, string][] = [
  ['hash arguments', `{{#each items}}{{lookup a "b" ${hash}}}{{/each}}`],
  ['nested subexpressions', `{{lookup ${nested} "b"}}`],
  ['a long path', `{{a${'.a'.repeat(100_000)}}}`],
  ['many segments', `{{lookup a "b"${' k=(lookup a "b")'.repeat(20)}}}`.repeat(200)],
]

describe('expressions bounded when saved', () => {
  it.each(heavy)(
    'refuses %s in a template (create and PATCH) and a broadcast (create and PATCH)',
    async (_, html) => {
      const expected = { type: 'validation_error', code: 'invalid_template', param: 'html' }
      const created = await client.post('/v1/templates', acme.live, { name: 'heavy', html })
      expect(created.status).toBe(400)
      expect(created.body.error).toMatchObject(expected)
      await client.post('/v1/templates', acme.live, { name: 'light', html: '<p>{{a}}</p>' })
      const patched = await client.patch('/v1/templates/light', acme.live, { html })
      expect(patched.status).toBe(400)
      expect(patched.body.error).toMatchObject(expected)

      const draft = { audienceId, from: acme.from, subject: 'News', html }
      const b = await client.post('/v1/broadcasts', acme.live, draft)
      expect(b.status).toBe(400)
      expect(b.body.error).toMatchObject(expected)
      const ok = await client.post('/v1/broadcasts', acme.live, { ...draft, html: '<p>{{first_name}}</p>' })
      expect(ok.status).toBe(201)
      const bp = await client.patch(`/v1/broadcasts/${ok.body.id}`, acme.live, { html })
      expect(bp.status).toBe(400)
      expect(bp.body.error).toMatchObject(expected)
    },
  )
})

const fromTemplate = (name: string, data: Record<string, unknown>) =>
  email(acme.from, { html: undefined, subject: undefined, template: name, data })

describe('renders bounded by output and work', () => {
  it('stops escaped copies of a large value at MAX_MESSAGE_BYTES: 400 payload_too_large', async () => {
    const saved = await client.post('/v1/templates', acme.live, {
      name: 'copies',
      subject: 'Copies',
      html: '{{x}}'.repeat(2000),
    })
    expect(saved.status).toBe(201)
    const data = { x: '&'.repeat(300_000) }
    const preview = await client.post('/v1/templates/copies/render', acme.live, { data })
    expect(preview.status).toBe(400)
    expect(preview.body.error).toMatchObject({ code: 'payload_too_large', param: 'html' })
    const send = await client.post('/v1/emails', acme.test, fromTemplate('copies', data))
    expect(send.status).toBe(400)
    expect(send.body.error).toMatchObject({ code: 'payload_too_large', param: 'html' })
  })

  it('refuses an #each doing more than MAX_RENDER_STEPS evaluations: 400 invalid_template_data', async () => {
    const html = `{{#each items}}${'{{../e}}'.repeat(1997)}{{/each}}`
    expect((await client.post('/v1/templates', acme.live, { name: 'busy', html })).status).toBe(201)
    const data = { items: Array.from({ length: 20_000 }, () => 1), e: '' }
    const preview = await client.post('/v1/templates/busy/render', acme.live, { data })
    expect(preview.status).toBe(400)
    expect(preview.body.error).toMatchObject({ code: 'invalid_template_data', param: 'data' })
    const send = await client.post('/v1/emails', acme.test, fromTemplate('busy', data))
    expect(send.body.error).toMatchObject({ code: 'invalid_template_data', param: 'data' })
    // The same template over a few items renders.
    const few = await client.post('/v1/templates/busy/render', acme.live, { data: { items: [1, 2], e: 'x' } })
    expect(few.status).toBe(200)
    expect(few.body.html).toBe('x'.repeat(2 * 1997))
  })

  it('still sends a 10,000-row table of 10 columns and 1 MB of static html with a few variables', async () => {
    const cols = 'abcdefghij'.split('')
    const table = `<table>{{#each rows}}<tr>${cols.map((c) => `<td>{{${c}}}</td>`).join('')}</tr>{{/each}}</table>`
    expect(
      (await client.post('/v1/templates', acme.live, { name: 'table', subject: 'Rows', html: table })).status,
    ).toBe(201)
    const rows = Array.from({ length: 10_000 }, (_, r) => Object.fromEntries(cols.map((c) => [c, r % 10])))
    const sent = await client.post('/v1/emails', acme.test, fromTemplate('table', { rows }))
    expect(sent.status).toBe(200)
    expect(sent.body.status).toBe('test')

    const page = `<p>${'Lorem ipsum dolor sit amet. '.repeat(35_000)}</p>`
    const html = `<h1>Hi {{name}}</h1>${page}<p>{{plan}}{{#each items}} {{this}}{{/each}}</p>`
    expect(
      (await client.post('/v1/templates', acme.live, { name: 'page', subject: 'Hi {{name}}', html })).status,
    ).toBe(201)
    const big = await client.post(
      '/v1/emails',
      acme.test,
      fromTemplate('page', { name: 'Ann', plan: 'Pro', items: [1] }),
    )
    expect(big.status).toBe(200)
    expect(big.body.status).toBe('test')
  })
})
