import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

// Every event of an email carries its tags (up to 50, keys of 64 characters, values of 256: about
// 48 KB in a script of three bytes a character). The events one write records travel together,
// up to 100 in a message; emails with such tags accepted or delivered together must still have
// every event reach the webhook, whatever NATS's 1 MiB message limit.
let live: string
const DOMAIN = 'mail.heavy-tags.test'
const { te, stack, client, receiver, seed } = useStack(['auth', 'email', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT: '100000' },
  receiver: true,
  seed: true,
  before: () =>
    stack.start('dispatcher', { MAIL_TRANSPORT: 'file', MAIL_OUTBOX_DIR: `/tmp/${te.natsPrefix}-outbox` }),
})

beforeAll(async () => {
  const p = await createProject(client, 'heavy-tags')
  live = p.live
  await seed.domain(p.project.id, DOMAIN)
  expect((await client.post('/v1/webhooks', live, { url: receiver.url() })).status).toBe(201)
}, 60_000)

const tags = (n: number): Record<string, string> =>
  Object.fromEntries(
    Array.from({ length: 50 }, (_, i) => [
      `${String(i).padStart(2, '0')}${'語'.repeat(62)}`,
      `${n}${'値'.repeat(250)}`,
    ]),
  )

describe('events of emails with many long tags', () => {
  it('every email.queued and email.delivered reaches the webhook', async () => {
    const batches = await Promise.all(
      [0, 1, 2].map((b) =>
        client.post(
          '/v1/emails/batch',
          live,
          Array.from({ length: 14 }, (_, i) => ({
            from: `hi@${DOMAIN}`,
            to: `user${b}-${i}@example.com`,
            subject: 'Heavy',
            text: 'x',
            tags: tags(b * 100 + i),
          })),
        ),
      ),
    )
    for (const r of batches) expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200)
    const ids: string[] = batches.flatMap((r) => r.body.data.map((d: { id: string }) => d.id))
    expect(ids).toHaveLength(42)
    await waitFor(
      async () => {
        const rows = await seed.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM emails WHERE id = ANY($1) AND status = 'delivered'`,
          [ids],
        )
        return rows[0]!.n === ids.length || null
      },
      { timeoutMs: 30_000, what: 'every email delivered' },
    )
    const seen = (type: string) =>
      new Set(
        receiver.requests.filter((r) => r.body?.type === type).map((r) => r.body.data.emailId as string),
      )
    await waitFor(
      () => ids.every((id) => seen('email.queued').has(id) && seen('email.delivered').has(id)) || null,
      { timeoutMs: 30_000, what: 'every email.queued and email.delivered at the webhook' },
    ).catch((err) => {
      const missing = (type: string) => ids.filter((id) => !seen(type).has(id)).length
      throw new Error(
        `${err.message}: ${missing('email.queued')} email.queued and ${missing('email.delivered')} email.delivered missing`,
      )
    })
  }, 90_000)
})
