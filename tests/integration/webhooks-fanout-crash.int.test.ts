import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { spawnService } from '../support/processes.js'
import { useStack } from '../support/use-stack.js'
import { EventPublisher, makeEvent, sql } from '../support/webhooks.js'

// A backlog of events (single and group messages) waits in the stream while no webhook replica
// runs; the first replica is killed while it fans the backlog out and delivers it, and the next
// one must give every (webhook, event) exactly one delivery, each at the receiver. The killed
// replica's claims come back when their leases end (15 s, renewed until the kill), and the messages
// it had pulled and not acknowledged after the consumer's ack wait (10 s).
const { te, stack, client, receiver } = useStack(['auth', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '1000' },
  receiver: true,
  after: () => events.close(),
})
let events: EventPublisher

beforeAll(async () => {
  events = await EventPublisher.connect(te)
})

describe('fan-out of a backlog cut short', () => {
  it('every (webhook, event) gets one delivery, and reaches its receiver, after the replica fanning out is killed', async () => {
    // A replica creates the webhooks (and their invalidations), then none runs while events pile up.
    await stack.start('webhook')
    const [a, b] = [await createProject(client, 'backlog-a'), await createProject(client, 'backlog-b')]
    const hooks: Array<{ project: string; path: string }> = []
    for (const [i, p] of [a, a, a, b, b].entries()) {
      const path = `/hook-${i}`
      expect((await client.post('/v1/webhooks', p.live, { url: receiver.url(path) })).status).toBe(201)
      hooks.push({ project: p.project.id, path })
    }
    await stack.stop('webhook')

    const sent: Array<{ projectId: string; event: ReturnType<typeof makeEvent> }> = []
    for (let i = 0; i < 400; i++)
      sent.push({
        projectId: (i % 3 ? a : b).project.id,
        event: makeEvent(i % 2 ? 'email.delivered' : 'email.sent'),
      })
    for (const m of sent.slice(0, 200)) await events.publish(m.projectId, m.event)
    for (let g = 200; g < 400; g += 100) await events.publishGroup(sent.slice(g, g + 100))

    const first = await spawnService('webhook', stack.env())
    await waitFor(() => receiver.requests.length > 0 || null, {
      timeoutMs: 20_000,
      what: 'the first delivery',
    })
    await first.kill()
    await stack.start('webhook')

    const expected = new Set<string>()
    for (const m of sent)
      for (const h of hooks) if (h.project === m.projectId) expected.add(`${h.path} ${m.event.id}`)
    const seen = () => new Set(receiver.requests.map((r) => `${r.path} ${r.body.id}`))
    await waitFor(() => seen().size === expected.size || null, {
      timeoutMs: 45_000,
      what: 'every (webhook, event) at the receiver',
    })
    expect([...seen()].sort()).toEqual([...expected].sort())
    const rows = await waitFor(
      async () => {
        const r = await sql(
          te,
          `SELECT status, count(*)::int AS n, count(DISTINCT (webhook_id, event_id))::int AS pairs
           FROM webhook_deliveries GROUP BY status`,
        )
        return r.length === 1 && r[0].status === 'success' ? r : null
      },
      // A delivery the killed replica had sent but not recorded is sent again once its lease
      // (15 s after the kill at most) ends, which can be after the receiver has seen every pair.
      { timeoutMs: 30_000, what: 'every delivery a success' },
    )
    expect(rows).toEqual([{ status: 'success', n: expected.size, pairs: expected.size }])
  }, 90_000)
})
