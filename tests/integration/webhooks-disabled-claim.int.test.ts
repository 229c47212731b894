import { describe, expect, it } from 'vitest'
import { DeliveryStore } from '../../services/webhook/src/infra/delivery-store.js'
import { failPendingChunk } from '../../services/webhook/src/infra/leftover-deliveries.js'
import { useTestDb } from '../support/test-db.js'
import { fakeId, insertWebhook, makeEvent, sql } from '../support/webhooks.js'

// A disabling commits the webhook's change first and fails its deliveries in chunks afterwards
// (DeliveryCleanup), so a replica's claim can find a due delivery of a webhook already disabled.
// The claim counted an attempt for it and left the replica to take it back (failUnsent); when the
// disabling's failing came first and the replica stopped before it took it back (its pool closed
// under a hand-back), the delivery stayed "failed, webhook disabled" with an attempt the receiver
// never got. The claim now fails such a delivery itself, counting nothing.
const t = useTestDb()
const { te } = t

/** A project with one webhook; `deliveries` pending ones of it, due now, each as given. */
async function webhookWith(deliveries: Array<{ attempt: number; leaseEnded?: boolean }>) {
  const projectId = fakeId('proj')
  const webhookId = fakeId('wh')
  await sql(te, `INSERT INTO projects (id, slug, name, updated_at) VALUES ($1, $1, 'claim', now())`, [
    projectId,
  ])
  await insertWebhook(te, { id: webhookId, projectId, url: 'http://receiver.test/hook', secret: 'whsec_x' })
  const ids: string[] = []
  for (const d of deliveries) {
    const id = fakeId('dlv')
    const event = makeEvent()
    await sql(
      te,
      `INSERT INTO webhook_deliveries (id, webhook_id, project_id, event_id, event_type, payload, attempt, status,
         next_attempt_at, locked_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', now(), CASE WHEN $8 THEN now() - interval '1 second' END)`,
      [
        id,
        webhookId,
        projectId,
        event.id,
        event.type,
        JSON.stringify(event),
        d.attempt,
        d.leaseEnded ?? false,
      ],
    )
    ids.push(id)
  }
  return { webhookId, ids }
}

const rowOf = async (id: string) =>
  (
    await sql(
      te,
      `SELECT status, attempt, response_code AS "responseCode", response_body AS "responseBody",
              locked_until IS NOT NULL AS leased, next_attempt_at IS NULL AS "noRetry"
       FROM webhook_deliveries WHERE id = $1`,
      [id],
    )
  )[0]

const disabledRow = (attempt: number) => ({
  status: 'failed',
  attempt,
  responseCode: null,
  responseBody: 'webhook disabled',
  leased: false,
  noRetry: true,
})

describe('a claim that finds a due delivery of a disabled webhook', () => {
  it('fails it counting no attempt, so the disabling failing it too leaves none counted', async () => {
    const disabled = await webhookWith([{ attempt: 0 }])
    const enabled = await webhookWith([{ attempt: 0 }])
    // The disabling has committed its change; its chunked failing has not reached the delivery.
    await sql(te, 'UPDATE webhooks SET enabled = false WHERE id = $1', [disabled.webhookId])
    const claimed = await new DeliveryStore(t.db).claim(10, new Map(), 10, 60_000)
    // The disabling's failing comes now; the replica stops before doing anything more.
    await failPendingChunk(t.db, disabled.webhookId, 'infinity')
    // Never sent: no attempt. Before, it was left failed with attempt 1 and leased, for the
    // stopped replica to take back.
    expect(await rowOf(disabled.ids[0]!)).toEqual(disabledRow(0))
    // Only the enabled webhook's delivery was handed to the replica for an attempt.
    expect(claimed.map((d) => [d.id, d.attempt])).toEqual([[enabled.ids[0], 1]])
  })

  it('keeps the attempts made, and gives back the number of a claim whose replica was killed', async () => {
    // A retry after two attempts; and one whose third claim's replica was killed before any outcome
    // was recorded (its lease ran out): that claim, never known to be sent, counts nothing.
    const { webhookId, ids } = await webhookWith([{ attempt: 2 }, { attempt: 3, leaseEnded: true }])
    await sql(te, 'UPDATE webhooks SET enabled = false WHERE id = $1', [webhookId])
    const claimed = await new DeliveryStore(t.db).claim(10, new Map(), 10, 60_000)
    expect(await rowOf(ids[0]!)).toEqual(disabledRow(2))
    expect(await rowOf(ids[1]!)).toEqual(disabledRow(2))
    expect(claimed.filter((d) => d.webhookId === webhookId)).toEqual([])
  })
})
