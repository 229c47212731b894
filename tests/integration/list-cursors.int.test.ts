import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// Every list pages with an opaque cursor; one list's cursor handed to another must be refused, not
// read as a position in the wrong table (the email, event and delivery lists: admin-emails test).
const { client } = useStack(['auth', 'email', 'broadcast', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme', 'news.acme.test')
})

describe('list cursors', () => {
  it('a cursor another list returned is 400 invalid_query on the template, contact, audience and broadcast lists', async () => {
    const audienceId = (await client.post('/v1/audiences', acme.live, { name: 'One' })).body.id
    await client.post('/v1/audiences', acme.live, { name: 'Two' })
    for (const address of ['ann@example.com', 'bob@example.com'])
      expect((await client.post('/v1/contacts', acme.live, { email: address })).status).toBe(201)
    for (const name of ['first', 'second'])
      expect(
        (await client.post('/v1/templates', acme.live, { name, subject: 'Hi', text: 'Hello' })).status,
      ).toBe(201)
    for (const subject of ['One', 'Two'])
      expect(
        (
          await client.post('/v1/broadcasts', acme.live, {
            audienceId,
            from: acme.from,
            subject,
            html: '<p>News</p><a href="{{unsubscribe_url}}">Unsubscribe</a>',
          })
        ).status,
      ).toBe(201)

    const lists = ['/v1/templates', '/v1/contacts', '/v1/audiences', '/v1/broadcasts']
    const cursors: Record<string, string> = {}
    for (const path of lists) {
      const r = await client.get(`${path}?limit=1`, acme.live)
      expect(r.body.nextCursor, path).toEqual(expect.any(String))
      cursors[path] = r.body.nextCursor
    }
    for (const path of lists) {
      for (const [from, cursor] of Object.entries(cursors)) {
        const r = await client.get(`${path}?limit=1&cursor=${cursor}`, acme.live)
        if (from === path)
          expect([r.status, r.body.data?.length], `${path} with its own cursor`).toEqual([200, 1])
        else
          expect(
            [r.status, r.body.error?.code, r.body.error?.param],
            `${path} with a cursor of ${from}`,
          ).toEqual([400, 'invalid_query', 'cursor'])
      }
    }
  })
})
