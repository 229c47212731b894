import { AdminClient, MailerClient } from '@mailer/client'
import { newId } from '@mailer/contracts'
import { connect } from 'nats'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { createProject } from '../support/http.js'
import { mailerRpc } from '../support/rpc.js'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'
import { makeEvent } from '../support/webhooks.js'

// A filter few rows match (`status=complained`, a mistyped `from`, `type=email.complained`) used to
// read the project's whole history in one request, past DATABASE_QUERY_TIMEOUT_MS on a large one.
// With a scan budget of 10 rows a page is answered once 10 rows past the cursor were read, short
// or empty, with a cursor from there: paging on still returns every match exactly once, in order.
const SCAN = 10
const { te, client, stack } = useStack(['auth', 'email', 'webhook', 'gateway'], {
  env: { LIST_SCAN_ROWS: String(SCAN) },
})

const N = 60
const T0 = Date.parse('2026-03-01T10:00:00.000Z')
/** Row i newest first: i = 0 is the newest; 30 and 31 share a millisecond (the id breaks the tie). */
const at = (i: number) => new Date(T0 - (i === 31 ? 30 : i) * 1000).toISOString()
/** Newest-first positions of the rare rows: none within the first scan of 10 rows. */
const RARE = new Set([12, 30, 31, 47, 59])

let acme: Awaited<ReturnType<typeof createProject>>
let other: Awaited<ReturnType<typeof createProject>>

async function seedEmails(projectId: string, rare: Set<number>) {
  const rows = Array.from({ length: N }, (_, i) => ({
    id: newId('email'),
    status: rare.has(i) ? 'complained' : 'delivered',
    to: rare.has(i) ? 'rare@example.com' : `r${i}@example.com`,
    createdAt: at(i),
  }))
  await sql(
    te,
    `INSERT INTO emails (id, project_id, mode, source, status, from_address, reply_to, "to", cc, bcc, subject, tags, created_at)
     SELECT id, $1, 'live', 'http', status, 'Acme <hello@acme.test>', '{}', ARRAY[addr], '{}', '{}', 'Hello', '{}', created_at
     FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS t(id, status, addr, created_at)`,
    [
      projectId,
      rows.map((r) => r.id),
      rows.map((r) => r.status),
      rows.map((r) => r.to),
      rows.map((r) => r.createdAt),
    ],
  )
  await sql(
    te,
    `INSERT INTO email_recipients (email_id, address, kind, status) SELECT id, addr, 'to', 'delivered'
     FROM unnest($1::text[], $2::text[]) AS t(id, addr)`,
    [rows.map((r) => r.id), rows.map((r) => r.to)],
  )
}

async function seedEvents(projectId: string, rare: Set<number>) {
  const events = Array.from({ length: N }, (_, i) =>
    makeEvent(rare.has(i) ? 'email.complained' : 'email.delivered', { createdAt: at(i) }),
  )
  await sql(
    te,
    `INSERT INTO email_events (id, project_id, email_id, mode, type, recipient, payload, created_at)
     SELECT id, $1, email_id, 'live', type, 'to@example.com', payload::jsonb, created_at
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
       AS t(id, email_id, type, payload, created_at)`,
    [
      projectId,
      events.map((e) => e.id),
      events.map((e) => e.data.emailId),
      events.map((e) => e.type),
      events.map((e) => JSON.stringify(e)),
      events.map((e) => e.createdAt),
    ],
  )
}

/** What the list must return across its pages: the matching rows in the API's order. */
const expected = async (table: 'emails' | 'email_events', where: string, params: unknown[]) =>
  (await sql(te, `SELECT id FROM ${table} WHERE ${where} ORDER BY created_at DESC, id DESC`, params)).map(
    (r) => r.id as string,
  )

/** Reads `path` page after page to its end: every page, and the ids in the order returned. */
async function walk(path: string, key: string) {
  const pages: Array<{ ids: string[]; nextCursor: string | null }> = []
  let cursor: string | null = null
  do {
    const sep = path.includes('?') ? '&' : '?'
    const r: { status: number; body: any } = await client.get(
      `${path}${cursor ? `${sep}cursor=${cursor}` : ''}`,
      key,
    )
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    pages.push({ ids: r.body.data.map((x: { id: string }) => x.id), nextCursor: r.body.nextCursor })
    cursor = r.body.nextCursor
    expect(pages.length).toBeLessThan(50)
  } while (cursor)
  return { pages, ids: pages.flatMap((p) => p.ids) }
}

beforeAll(async () => {
  acme = await createProject(client, 'scan-acme')
  other = await createProject(client, 'scan-other')
  await seedEmails(acme.project.id, RARE)
  await seedEmails(other.project.id, new Set([5, 40]))
  await seedEvents(acme.project.id, RARE)
  await seedEvents(other.project.id, new Set([5, 40]))
})

describe('email lists: a filter few rows match reads a bounded number of rows per page', () => {
  it('status=complained answers an empty page with a cursor, and paging on returns each match once, in order', async () => {
    const { pages, ids } = await walk('/v1/emails?status=complained&limit=2', acme.live)
    // The first 10 rows past the top hold no complained email: nothing found, but more to read.
    expect(pages[0]).toEqual({ ids: [], nextCursor: expect.any(String) })
    expect(ids).toEqual(
      await expected('emails', 'project_id = $1 AND status = $2', [acme.project.id, 'complained']),
    )
    expect(ids).toHaveLength(RARE.size)
    for (const p of pages) expect(p.ids.length).toBeLessThanOrEqual(2)
    expect(pages.at(-1)?.nextCursor).toBeNull()
  })

  it('a from no email has reads the list in steps of the budget, every page empty, and ends', async () => {
    const { pages, ids } = await walk('/v1/emails?from=typo@acme.test&limit=25', acme.live)
    expect(ids).toEqual([])
    expect(pages.length).toBeGreaterThanOrEqual(N / SCAN)
    expect(pages.at(-1)?.nextCursor).toBeNull()
  })

  it('a filter most rows match still fills its pages', async () => {
    const { pages, ids } = await walk('/v1/emails?status=delivered&limit=5', acme.live)
    expect(ids).toEqual(
      await expected('emails', 'project_id = $1 AND status = $2', [acme.project.id, 'delivered']),
    )
    expect(pages.slice(0, -1).every((p) => p.ids.length === 5)).toBe(true)
  })

  it('to is read through its index: the match comes on the first page', async () => {
    const r = await client.get('/v1/emails?to=rare@example.com&limit=10', acme.live)
    expect(r.body.data.map((e: { id: string }) => e.id)).toEqual(
      await expected('emails', 'project_id = $1 AND status = $2', [acme.project.id, 'complained']),
    )
    expect(r.body.nextCursor).toBeNull()
  })

  it('the admin list across projects pages the same way', async () => {
    const { pages, ids } = await walk('/v1/admin/emails?status=complained&limit=3', client.admin)
    expect(pages[0]?.ids).toEqual([])
    expect(ids).toEqual(await expected('emails', 'status = $1', ['complained']))
    expect(ids).toHaveLength(RARE.size + 2)
  })
})

describe('event lists: type=… reads a bounded number of rows per page', () => {
  it('GET /v1/events?type=email.complained pages through every match once, in order', async () => {
    const { pages, ids } = await walk('/v1/events?type=email.complained&limit=2', acme.live)
    expect(pages[0]).toEqual({ ids: [], nextCursor: expect.any(String) })
    expect(ids).toEqual(
      await expected('email_events', 'project_id = $1 AND type = $2', [acme.project.id, 'email.complained']),
    )
    expect(ids).toHaveLength(RARE.size)
  })

  it('GET /v1/admin/events?type=email.complained across projects', async () => {
    const { pages, ids } = await walk('/v1/admin/events?type=email.complained&limit=4', client.admin)
    expect(pages[0]?.ids).toEqual([])
    expect(ids).toEqual(await expected('email_events', 'type = $1', ['email.complained']))
  })
})

describe('the SDK iterators go on past short and empty pages', () => {
  it('collects every match of a rare filter', async () => {
    const mailer = new MailerClient({ apiKey: acme.live, baseUrl: stack.gatewayUrl })
    const admin = new AdminClient({ adminKey: ADMIN_KEY, baseUrl: stack.gatewayUrl })
    const collect = async <T extends { id: string }>(it: AsyncIterable<T>) => {
      const out: string[] = []
      for await (const x of it) out.push(x.id)
      return out
    }
    expect(await collect(mailer.emails.iterate({ status: 'complained', limit: 2 }))).toEqual(
      await expected('emails', 'project_id = $1 AND status = $2', [acme.project.id, 'complained']),
    )
    expect(await collect(mailer.events.iterate({ type: 'email.complained', limit: 2 }))).toEqual(
      await expected('email_events', 'project_id = $1 AND type = $2', [acme.project.id, 'email.complained']),
    )
    expect(await collect(admin.emails.iterate({ status: 'complained', limit: 2 }))).toEqual(
      await expected('emails', 'status = $1', ['complained']),
    )
  })
})

describe('MailerRpc list', () => {
  it('answers the same bounded pages as GET /v1/emails (it runs its handler)', async () => {
    const nc = await connect({ servers: te.natsUrl })
    try {
      const ids: string[] = []
      let cursor: string | undefined
      const first = await mailerRpc(nc, te.natsPrefix, 'scan-acme', 'list', {
        status: 'complained',
        limit: 2,
      })
      expect(first).toEqual({ data: [], nextCursor: expect.any(String) })
      cursor = first.nextCursor
      while (cursor) {
        const page = await mailerRpc(nc, te.natsPrefix, 'scan-acme', 'list', {
          status: 'complained',
          limit: 2,
          cursor,
        })
        ids.push(...page.data.map((e: { id: string }) => e.id))
        cursor = page.nextCursor ?? undefined
      }
      expect(ids).toEqual(
        await expected('emails', 'project_id = $1 AND status = $2', [acme.project.id, 'complained']),
      )
    } finally {
      await nc.close()
    }
  })
})
