import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

// Requests that write the same contacts and members at once: each waits for the other, and none
// fails (PostgreSQL used to break a deadlock between them by failing one: a 500).
const { client } = useStack(['auth', 'broadcast', 'gateway'])
let acme: Awaited<ReturnType<typeof createProject>>

beforeAll(async () => {
  acme = await createProject(client, 'acme')
})

const EMAILS = Array.from({ length: 300 }, (_, i) => `c${String(i).padStart(4, '0')}@example.com`)
/** Every other list runs backwards: the same contacts in opposite orders. */
const orders = <T>(items: T[], n: number): T[][] =>
  Array.from({ length: n }, (_, k) => (k % 2 === 0 ? [...items] : [...items].reverse()))

describe('concurrent writes of the same contacts', () => {
  it('imports naming the same contacts in other orders all succeed, into one audience too', async () => {
    const audienceId = (await client.post('/v1/audiences', acme.live, { name: 'Imports' })).body.id
    for (let round = 0; round < 8; round++) {
      const answers = await Promise.all(
        orders(EMAILS, 4).map((emails, k) =>
          client.post(
            `/v1/contacts/import?audienceId=${audienceId}`,
            acme.live,
            emails.map((email) => ({ email, firstName: `round ${round} list ${k}` })),
          ),
        ),
      )
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200])
    }
    const audience = await client.get(`/v1/audiences/${audienceId}`, acme.live)
    expect(audience.body.contactCount).toBe(EMAILS.length)
  })

  it('adding the same contacts to an audience in other orders at once always succeeds', async () => {
    const ids: string[] = []
    let cursor: string | null = null
    do {
      const page: { body: { data: Array<{ id: string }>; nextCursor: string | null } } = await client.get(
        `/v1/contacts?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        acme.live,
      )
      ids.push(...page.body.data.map((c) => c.id))
      cursor = page.body.nextCursor
    } while (cursor)
    expect(ids).toHaveLength(EMAILS.length)
    for (let round = 0; round < 8; round++) {
      const audienceId = (await client.post('/v1/audiences', acme.live, { name: `Adds ${round}` })).body.id
      const answers = await Promise.all(
        orders(ids, 4).map((contactIds) =>
          client.post(`/v1/audiences/${audienceId}/contacts`, acme.live, { contactIds }),
        ),
      )
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200])
      // Each contact was added once, by whichever request got to it first.
      expect(answers.reduce((n, a) => n + a.body.added, 0)).toBe(ids.length)
    }
  })
})
