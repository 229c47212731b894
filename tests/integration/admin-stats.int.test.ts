import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, inSeconds, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

/* `GET /v1/admin/stats` (interface.md "Admin routes"): emails by status per project. */
const { te, client } = useStack(['auth', 'email', 'gateway'], {
  // The stats' counts (email_status_hours) refreshed every second, every hour of them included.
  env: { STATS_REFRESH_SECONDS: '1', STATS_FULL_REFRESH_SECONDS: '1' },
})

beforeAll(async () => {
  // Projects besides the one counted: every project is listed.
  await projectWithDomain(client, 'acme')
  await projectWithDomain(client, 'other')
})

const send = async (key: string, body: unknown) => {
  const r = await client.post('/v1/emails', key, body)
  if (r.status >= 300) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.id as string
}
const admin = (path: string) => client.get(path, client.admin)

describe('GET /v1/admin/stats', () => {
  it('counts emails by status per project: today, last 7 days, last 30 days', async () => {
    const s = await projectWithDomain(client, 'stats')
    const [, canceled, days3, days10, days40] = await Promise.all(
      [1, 2, 3, 4, 5].map(() => send(s.live, email(s.from, { scheduledAt: inSeconds(3600) }))),
    )
    await client.del(`/v1/emails/${canceled}`, s.live)
    await send(s.test, email(s.from))
    await sql(te, `UPDATE emails SET created_at = now() - interval '3 days' WHERE id = $1`, [days3])
    await sql(te, `UPDATE emails SET created_at = now() - interval '10 days' WHERE id = $1`, [days10])
    await sql(te, `UPDATE emails SET created_at = now() - interval '40 days' WHERE id = $1`, [days40])

    // As of the next refresh of the counts: the dates changed above are hours a full pass redoes.
    const stats = async () => {
      const r = await admin('/v1/admin/stats')
      expect(r.status).toBe(200)
      return r.body.data as any[]
    }
    await expect
      .poll(async () => (await stats()).find((p: any) => p.slug === 'stats'), { timeout: 20_000 })
      .toEqual({
        projectId: s.project.id,
        slug: 'stats',
        name: 'Project stats',
        today: { scheduled: 1, canceled: 1, test: 1 },
        last7d: { scheduled: 2, canceled: 1, test: 1 },
        last30d: { scheduled: 3, canceled: 1, test: 1 },
      })
    expect((await stats()).map((p: any) => p.slug)).toEqual(
      expect.arrayContaining(['acme', 'other', 'stats']),
    )
    await projectWithDomain(client, 'quiet')
    const quiet = (await admin('/v1/admin/stats')).body.data.find((p: any) => p.slug === 'quiet')
    expect(quiet).toMatchObject({ today: {}, last7d: {}, last30d: {} })
  })
})
