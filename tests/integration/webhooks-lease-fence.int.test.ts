import { createDb, type Db } from '@mailer/db'
import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeliveryStore } from '../../services/webhook/src/infra/delivery-store.js'
import { failPendingChunk } from '../../services/webhook/src/infra/leftover-deliveries.js'
import { fakeId, insertWebhook, makeEvent, sleep, sql } from '../support/webhooks.js'

// A claim whose lease ran out while its delivery waited in a replica's memory is followed by a
// claim of another replica under the same attempt number. Disabling the webhook then, while the
// second one's request is in flight, must not let the first one's hand-back take the number back:
// that made the second one's 2xx unrecordable, and the record said "failed, webhook disabled"
// for a delivery the receiver had got.
const te = useTestEnv()
let db: Db

beforeAll(() => {
  db = createDb(te.databaseUrl)
})
afterAll(async () => {
  await db.$disconnect()
})

/** A project, a webhook and one pending delivery of it, due now. */
async function pendingDelivery() {
  const projectId = fakeId('proj')
  const webhookId = fakeId('wh')
  const deliveryId = fakeId('dlv')
  const event = makeEvent()
  await sql(te, `INSERT INTO projects (id, slug, name, updated_at) VALUES ($1, $1, 'fence', now())`, [
    projectId,
  ])
  await insertWebhook(te, {
    id: webhookId,
    projectId,
    url: 'http://receiver.test/hook',
    secret: 'whsec_x',
    events: ['email.sent'],
  })
  await sql(
    te,
    `INSERT INTO webhook_deliveries (id, webhook_id, project_id, event_id, event_type, payload, attempt, status, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, $6, 0, 'pending', now())`,
    [deliveryId, webhookId, projectId, event.id, event.type, JSON.stringify(event)],
  )
  return { webhookId, deliveryId }
}

const disable = (webhookId: string) =>
  db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe('UPDATE webhooks SET enabled = false WHERE id = $1', webhookId)
    await failPendingChunk(tx, webhookId, 'infinity')
  })

describe('a hand-back of a claim whose lease ran out', () => {
  it('leaves the number of the later claim alone when the webhook is disabled meanwhile', async () => {
    const { webhookId, deliveryId } = await pendingDelivery()
    const store = new DeliveryStore(db)

    // Replica A claims it ahead and keeps it in memory past its lease.
    const [a] = await store.claim(10, new Map(), 10, 1)
    await sleep(50)
    // Replica B claims it again (the same number: A never sent it) and sends it.
    const [b] = await store.claim(10, new Map(), 10, 60_000)
    expect([a?.attempt, b?.attempt]).toEqual([1, 1])

    // The webhook is disabled while B's request is in flight; A hands its claim back.
    await disable(webhookId)
    await store.unclaim([a!])

    // B's receiver answered 2xx: the record says so.
    const recorded = await store.finish(
      b!,
      { outcome: 'success', responseCode: 200, responseBody: 'ok' },
      { status: 'success' },
    )
    const [row] = await sql(
      te,
      'SELECT status, attempt, response_code FROM webhook_deliveries WHERE id = $1',
      [deliveryId],
    )
    expect({ recorded, ...row }).toEqual({
      recorded: true,
      status: 'success',
      attempt: 1,
      response_code: 200,
    })
  })
})

describe('a manual retry of a delivery failed by its webhook being disabled', () => {
  it('counts a new attempt after one that was in flight and failed', async () => {
    const { webhookId, deliveryId } = await pendingDelivery()
    const store = new DeliveryStore(db)
    const [inFlight] = await store.claim(10, new Map(), 10, 1)
    await disable(webhookId)
    // Its request was made and answered 500: the delivery stays failed, webhook disabled.
    await store.finish(
      inFlight!,
      { outcome: 'failure', responseCode: 500, responseBody: 'down' },
      { status: 'pending', delayMs: 0 },
    )
    await sleep(50)
    await sql(te, 'UPDATE webhooks SET enabled = true WHERE id = $1', [webhookId])
    await store.retryNow(deliveryId, webhookId)
    const [next] = await store.claim(10, new Map(), 10, 60_000)
    expect([inFlight?.attempt, next?.attempt]).toEqual([1, 2])
  })
})

describe('renewing the leases a replica holds', () => {
  it('renews the claim that holds the row, not an earlier one of the same row whose lease ran out', async () => {
    const { deliveryId } = await pendingDelivery()
    const store = new DeliveryStore(db)
    // A claim ahead whose lease ran out while it waited, and the claim that took the row again
    // (the same replica's, say): both are in hand, and only the second may be renewed.
    const [stale] = await store.claim(10, new Map(), 10, 1)
    await sleep(50)
    const [fresh] = await store.claim(10, new Map(), 10, 60_000)
    expect([stale?.id, fresh?.id]).toEqual([deliveryId, deliveryId])
    const tokens = await store.renew([stale!, fresh!], 60_000)
    expect(tokens[0]).toBeNull()
    expect(tokens[1]! > fresh!.lease).toBe(true)
    const [row] = await sql(te, 'SELECT locked_until::text AS lease FROM webhook_deliveries WHERE id = $1', [
      deliveryId,
    ])
    expect(row.lease).toBe(tokens[1])
  })
})
