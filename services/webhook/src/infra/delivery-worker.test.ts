import { DbWaits } from '@mailer/bus'
import { createLogger, Metrics } from '@mailer/observability'
import { afterEach, describe, expect, it } from 'vitest'
import type { ClaimedDelivery, DeliveryStore } from './delivery-store.js'
import { DeliveryWorker } from './delivery-worker.js'
import type { HttpSender, SendResult } from './http-sender.js'

// The race between a claim and a change of the project's webhooks (rotation, disabling, deletion)
// cannot be timed against a real database; the claim here waits until the test lets it answer.
const row = (id: string, projectId: string): ClaimedDelivery => ({
  id,
  webhookId: `wh_${projectId}`,
  projectId,
  eventId: `evt_${id}`,
  attempt: 1,
  lease: '2026-01-01 00:00:45+00',
  payload: { id: `evt_${id}`, type: 'email.sent', createdAt: '2026-01-01T00:00:00.000Z', data: {} },
  url: 'http://receiver.test/hook',
  secret: 'whsec_read_before_the_change',
  enabled: true,
})

class HeldClaims {
  claims = 0
  unclaimed: string[] = []
  finished: string[] = []
  /** What happened, in order ('unclaimed', and whatever the test adds). */
  events: string[] = []
  answer!: (rows: ClaimedDelivery[]) => void
  /** While set, a hand-back (of some rows) waits for it: the database has not answered yet. */
  unclaimHeld: Promise<void> | null = null
  unclaimsWaiting = 0
  claim(): Promise<ClaimedDelivery[]> {
    this.claims++
    return this.claims === 1 ? new Promise((r) => (this.answer = r)) : Promise.resolve([])
  }
  async unclaim(rows: Array<{ id: string }>) {
    if (rows.length === 0) return
    if (this.unclaimHeld) {
      this.unclaimsWaiting++
      await this.unclaimHeld
    }
    this.unclaimed.push(...rows.map((r) => r.id))
    this.events.push('unclaimed')
  }
  async finish(d: { id: string }) {
    this.finished.push(d.id)
    return true
  }
  async nextDueAt() {
    return null
  }
  async renew(rows: Array<{ lease: string }>) {
    return rows.map((r) => r.lease)
  }
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10))
  expect(ok()).toBe(true)
}

/**
 * A started worker whose claims wait for the test and whose sender records what it posted (and
 * waits for `answers`, if given, before answering).
 */
function startWorker(opts: { perWebhook?: number; answers?: Promise<void> } = {}) {
  const store = new HeldClaims()
  const posted: string[] = []
  const sender = {
    post: async (_url: string, _body: string, headers: Record<string, string>): Promise<SendResult> => {
      posted.push(Object.values(headers).find((v) => v.startsWith('whd_')) ?? '')
      store.events.push('posted')
      await opts.answers
      return { outcome: 'success', responseCode: 204, responseBody: '' }
    },
  }
  const started = new DeliveryWorker(
    store as unknown as DeliveryStore,
    sender as unknown as HttpSender,
    {
      schedule: [30],
      timeoutMs: 1_000,
      pollMs: 60_000,
      concurrency: 4,
      perWebhook: opts.perWebhook ?? 4,
      prefetch: 0,
      alive: () => true,
      dbWaits: new DbWaits(5_000),
      link: { up: () => true, drops: () => 0 },
    },
    createLogger({ service: 'test', level: 'silent' }),
    new Metrics('webhook_test'),
  )
  started.start()
  return { store, posted, started }
}

let worker: DeliveryWorker | undefined
afterEach(async () => {
  await worker?.stop()
})

describe('DeliveryWorker', () => {
  it("hands back a running claim's rows of a project whose webhooks changed meanwhile, and sends the rest", async () => {
    const { store, posted, started } = startWorker()
    worker = started
    await until(() => store.claims === 1)
    // The secret of project A is rotated while the claim is running.
    await worker.handBack('proj_a')
    store.answer([row('whd_1', 'proj_a'), row('whd_2', 'proj_b')])
    await until(() => store.finished.length === 1)
    expect(store.unclaimed).toEqual(['whd_1'])
    expect(posted).toEqual(['whd_2'])
    expect(store.finished).toEqual(['whd_2'])
  })

  it('a replica stopping while its claim is running sends none of those rows and hands them all back', async () => {
    const { store, posted, started: stopping } = startWorker()
    await until(() => store.claims === 1)
    // SIGTERM arrives while the claim is in PostgreSQL; it answers only afterwards.
    let stopped = false
    const stop = stopping.stop().then(() => {
      stopped = true
    })
    await new Promise((r) => setTimeout(r, 20))
    store.answer([row('whd_1', 'proj_a'), row('whd_2', 'proj_a'), row('whd_3', 'proj_b')])
    await stop
    expect(stopped).toBe(true)
    // Sent after the stop, they went out on a sender being closed (an attempt counted for a
    // request that never reached the receiver), or waited in memory for their lease to run out.
    expect(posted).toEqual([])
    expect(store.finished).toEqual([])
    expect(store.unclaimed.sort()).toEqual(['whd_1', 'whd_2', 'whd_3'])
  })

  it('a replica stopping while a change hands back its waiting deliveries waits for that hand-back', async () => {
    // One slot: whd_1 goes out, whd_2 waits in memory. The receiver answers whd_1 once released.
    let answer!: () => void
    const answers = new Promise<void>((r) => (answer = r))
    const { store, started: stopping } = startWorker({ perWebhook: 1, answers })
    await until(() => store.claims === 1)
    store.answer([row('whd_1', 'proj_a'), row('whd_2', 'proj_a')])
    await until(() => store.events.includes('posted'))
    // A change of the project's webhooks arrives (another replica's broadcast, or this one's own
    // coming back over NATS): whd_2 is handed back, and the database has not answered that yet.
    let release!: () => void
    store.unclaimHeld = new Promise((r) => (release = r))
    void stopping.handBack('proj_a')
    await until(() => store.unclaimsWaiting === 1)
    answer()
    await until(() => store.finished.length === 1)
    // SIGTERM now. The pool closes once the worker has stopped: a hand-back still writing then
    // failed, and whd_2 stayed leased with its claim's attempt counted (for good, had the webhook's
    // disabling failed it meanwhile), though never sent.
    const stopped = stopping.stop().then(() => store.events.push('stopped'))
    await new Promise((r) => setTimeout(r, 20))
    release()
    await stopped
    expect(store.unclaimed).toEqual(['whd_2'])
    expect(store.events).toEqual(['posted', 'unclaimed', 'stopped'])
  })

  it("a replica stopping while a claim's stale rows go back hands back the claim's other waiting rows, sending none after", async () => {
    // One slot per webhook. The claim answers after proj_a's webhooks changed: whd_1 goes back
    // (stale); of proj_b's, whd_2 starts at once and whd_3 waits in memory.
    let answer!: () => void
    const answers = new Promise<void>((r) => (answer = r))
    const { store, posted, started: stopping } = startWorker({ perWebhook: 1, answers })
    await until(() => store.claims === 1)
    await stopping.handBack('proj_a')
    let release!: () => void
    store.unclaimHeld = new Promise((r) => (release = r))
    store.answer([row('whd_1', 'proj_a'), row('whd_2', 'proj_b'), row('whd_3', 'proj_b')])
    await until(() => store.unclaimsWaiting === 1)
    // SIGTERM while whd_1's hand-back is being written. Queued only after it, whd_2 went out after
    // the stop (on a sender being closed) and whd_3 stayed in memory, unsent, until its lease ran out.
    store.events.push('stopping')
    const stopped = stopping.stop()
    release()
    await until(() => store.unclaimed.length === 2)
    expect(store.unclaimed.sort()).toEqual(['whd_1', 'whd_3'])
    expect(store.events.slice(store.events.indexOf('stopping'))).not.toContain('posted')
    expect(posted).toEqual(['whd_2'])
    answer()
    await stopped
  })
})
