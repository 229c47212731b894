import { beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// Renders bounded by the size limit: a render past MAX_MESSAGE_BYTES (10 MiB here, the default)
// stops there.
const { client } = useStack(['auth', 'email', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let other: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  other = await projectWithDomain(client, 'other')
})

// 100 KB of static html repeated once per row: 300 rows render 30 MB, under the renderer's old
// 32 Mi-character bound, so the text was derived from all of it (seconds per email) before the
// size check refused it.
const ROW = `<div><p>${'Lorem ipsum dolor sit amet. '.repeat(3570)}</p></div>\n`
const rows = (n: number) => Array.from({ length: n }, (_, i) => i)

const template = (name: string) =>
  client.post('/v1/templates', acme.live, { name, subject: 'Rows', html: `{{#each rows}}${ROW}{{/each}}` })
const fromTemplate = (name: string, data: Record<string, unknown>) =>
  email(acme.from, { html: undefined, subject: undefined, template: name, data })

describe('a render past MAX_MESSAGE_BYTES', () => {
  it('is refused while rendering, so a batch of them holds up no other project', async () => {
    expect((await template('rows')).status).toBe(201)
    const items = Array.from({ length: 100 }, () => fromTemplate('rows', { rows: rows(300) }))
    // A test key: nothing is counted against the project.
    const heavy = client.post('/v1/emails/batch', acme.test, items)
    const meanwhile = client.post('/v1/emails', other.live, email(other.from))
    const [batch, send] = await Promise.all([heavy, meanwhile])
    expect(send.status).toBe(202)
    expect(batch.status).toBe(200)
    expect(batch.body.data).toHaveLength(100)
    for (const item of batch.body.data)
      expect(item.error).toMatchObject({ type: 'validation_error', code: 'payload_too_large', param: 'html' })
    // The same template with data that fits is sent as usual.
    const small = await client.post('/v1/emails', acme.test, fromTemplate('rows', { rows: rows(2) }))
    expect(small.body.status).toBe('test')
  })
})
