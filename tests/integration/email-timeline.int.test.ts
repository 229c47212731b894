import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// An email's record carries its timeline, which clicks lengthen without bound (MAX_RECORD_EVENTS).
const { te, client } = useStack(['auth', 'email', 'webhook', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
})

const send = async (key: string, body: unknown) => {
  const r = await client.post('/v1/emails', key, body)
  if (r.status >= 300) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.id as string
}

describe('GET /v1/emails/:id with a long timeline', () => {
  it('a timeline every click made longer still reads: its first 1,000 events, the rest through GET /v1/events', async () => {
    const id = await send(acme.live, email(acme.from, { subject: 'Clicked a lot' }))
    // Every GET of a tracked link adds an email.clicked (anyone holding the link can repeat it):
    // 2,500 of them, stored as the tracking store writes them, a millisecond apart.
    await sql(
      te,
      `INSERT INTO email_events (id, project_id, email_id, mode, type, recipient, payload, created_at)
       SELECT e.id, $1, $2, 'live', 'email.clicked', 'alice@example.com',
              jsonb_build_object('id', e.id, 'type', 'email.clicked', 'createdAt', to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'data', jsonb_build_object('emailId', $2::text, 'recipient', 'alice@example.com', 'from', $3::text,
                  'subject', 'Clicked a lot', 'tags', '{}'::jsonb, 'url', 'https://example.com/pricing?utm_campaign=spring-sale&n=' || g,
                  'userAgent', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36')),
              e.at
       FROM generate_series(1, 2500) g,
            LATERAL (SELECT 'evt_' || lpad(g::text, 26, '0') AS id, now() + g * interval '1 millisecond' AS at) e`,
      [acme.project.id, id, acme.from],
    )
    const got = await client.get(`/v1/emails/${id}`, acme.live)
    expect(got.status).toBe(200)
    expect(got.body.events).toHaveLength(1000)
    expect(got.body.events[0].type).toBe('email.queued')
    expect(got.body.events[1].data.url).toMatch(/&n=1$/)
    expect(got.body.events[999].data.url).toMatch(/&n=999$/)
    expect((await client.get(`/v1/admin/emails/${id}`, client.admin)).body.events).toHaveLength(1000)
    let all = 0
    let cursor: string | null = null
    do {
      const pageRes: any = await client.get(
        `/v1/events?emailId=${id}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        acme.live,
      )
      all += pageRes.body.data.length
      cursor = pageRes.body.nextCursor
    } while (cursor)
    expect(all).toBe(2501)
  })
})
