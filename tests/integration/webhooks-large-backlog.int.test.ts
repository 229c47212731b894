import { waitFor } from '@mailer/testing'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { useStack } from '../support/use-stack.js'
import { projectWithReceiver, sql } from '../support/webhooks.js'

// Disabling or deleting a webhook with a large backlog. Its deliveries were failed (disabled) or
// deleted in the change's own transaction, whose 5 s limit a backlog of a few hundred thousand
// outlasted: the change answered 500 and was rolled back, every time. Such a backlog is too slow to
// build here; the test's own transaction holding the backlog's rows makes the deliveries' work as
// long as it likes instead. The backlogs are several chunks (1,000) long, and their pending
// deliveries wait for a retry an hour away, so only the disabling or the deletion ends them.
const { te, stack, client, receivers } = useStack(['auth', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_CLEANUP_WAIT_MS: '300' },
})

const PENDING = 2_500
const FINISHED = 300

/**
 * `pending` deliveries of the webhook waiting for a retry (attempt 1 answered 500), then
 * `finished` ones that succeeded, each with its event's stored payload; event ids `evt_<tag>_<n>`.
 */
async function backlog(
  webhookId: string,
  projectId: string,
  tag: string,
  pending = PENDING,
  finished = FINISHED,
) {
  await sql(
    te,
    `WITH ins AS (
       INSERT INTO webhook_deliveries (id, webhook_id, project_id, event_id, event_type, attempt, status,
         response_code, response_body, next_attempt_at, created_at, completed_at)
       SELECT 'dlv_' || $3 || '_' || g, $1, $2, 'evt_' || $3 || '_' || g, 'email.delivered', 1,
              CASE WHEN g <= $4 THEN 'pending' ELSE 'success' END,
              CASE WHEN g <= $4 THEN 500 ELSE 200 END,
              CASE WHEN g <= $4 THEN 'broken' ELSE 'ok' END,
              CASE WHEN g <= $4 THEN now() + interval '1 hour' END,
              now() - interval '1 minute',
              CASE WHEN g <= $4 THEN NULL ELSE now() END
       FROM generate_series(1, $4::int + $5::int) g
       RETURNING event_id
     )
     INSERT INTO webhook_payloads (event_id, payload)
     SELECT event_id, jsonb_build_object('id', event_id) FROM ins`,
    [webhookId, projectId, tag, pending, finished],
  )
}

/** The webhook's deliveries, grouped by what a list shows of them. */
const outcomes = (webhookId: string) =>
  sql(
    te,
    `SELECT status, response_code AS "responseCode", response_body AS "responseBody", attempt,
            next_attempt_at IS NULL AS "noRetry", count(*)::int AS n
     FROM webhook_deliveries WHERE webhook_id = $1
     GROUP BY 1, 2, 3, 4, 5 ORDER BY 1`,
    [webhookId],
  )
const pendingOf = async (webhookId: string) =>
  (
    await sql(
      te,
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending'`,
      [webhookId],
    )
  )[0].n as number
const deliveriesOf = async (webhookId: string) =>
  (await sql(te, 'SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1', [webhookId]))[0]
    .n as number
const payloadsOf = async (tag: string) =>
  (
    await sql(te, `SELECT count(*)::int AS n FROM webhook_payloads WHERE event_id LIKE $1`, [`evt_${tag}_%`])
  )[0].n as number

/** The webhook's delivery rows locked by a transaction of the test's own, until `release()`. */
async function holdDeliveries(webhookId: string): Promise<{ release(): Promise<void> }> {
  const url = new URL(te.databaseUrl)
  const schema = url.searchParams.get('schema')!
  url.searchParams.delete('schema')
  const c = new pg.Client({ connectionString: url.toString(), options: `-c search_path=${schema}` })
  await c.connect()
  await c.query('BEGIN')
  await c.query('SELECT id FROM webhook_deliveries WHERE webhook_id = $1 FOR UPDATE', [webhookId])
  return {
    async release() {
      await c.query('COMMIT')
      await c.end()
    },
  }
}

/** The disabling's outcome for the backlog of `backlog()`. */
const disabledBacklog = () => [
  {
    status: 'failed',
    responseCode: null,
    responseBody: 'webhook disabled',
    attempt: 1,
    noRetry: true,
    n: PENDING,
  },
  { status: 'success', responseCode: 200, responseBody: 'ok', attempt: 1, noRetry: true, n: FINISHED },
]

describe('a webhook with a large backlog', () => {
  it('is disabled however long failing its deliveries takes, and every pending one ends failed', async () => {
    const { p, wh, projectId } = await projectWithReceiver(client, 'disable-backlog', receivers)
    await backlog(wh.id, projectId, 'dis')
    const held = await holdDeliveries(wh.id)
    try {
      // Before, the change waited for the deliveries' statement in its transaction and answered an
      // error, still enabled (here 503 at the gateway's 10 s; 500 once a long statement outlasted 5 s).
      const off = await client.patch(`/v1/webhooks/${wh.id}`, p.live, { enabled: false })
      expect(off.status).toBe(200)
      expect(off.body).toMatchObject({ id: wh.id, enabled: false })
      expect((await client.get(`/v1/webhooks/${wh.id}`, p.live)).body.enabled).toBe(false)
    } finally {
      await held.release()
    }
    await waitFor(async () => (await pendingOf(wh.id)) === 0, {
      what: 'every pending delivery failed',
      timeoutMs: 20_000,
    })
    expect(await outcomes(wh.id)).toEqual(disabledBacklog())
    const listed = (await client.get(`/v1/webhooks/${wh.id}/deliveries?limit=100`, p.live)).body.data as any[]
    expect(listed.filter((d) => d.status === 'pending')).toEqual([])
  })

  it('is deleted however long deleting its deliveries takes, and they all go with the payloads only they need', async () => {
    const { p, wh, projectId, receiver } = await projectWithReceiver(client, 'delete-backlog', receivers)
    await backlog(wh.id, projectId, 'del')
    // Another webhook of the project has a delivery of one of those events: its payload stays.
    const other = (await client.post('/v1/webhooks', p.live, { url: receiver.url('/other') })).body
    await sql(
      te,
      `INSERT INTO webhook_deliveries (id, webhook_id, project_id, event_id, event_type, attempt, status, created_at, completed_at)
       VALUES ('dlv_del_other', $1, $2, 'evt_del_1', 'email.delivered', 1, 'success', now(), now())`,
      [other.id, projectId],
    )
    const held = await holdDeliveries(wh.id)
    try {
      const gone = await client.del(`/v1/webhooks/${wh.id}`, p.live)
      expect(gone.status).toBe(200)
      expect(gone.body).toEqual({ id: wh.id, deleted: true })
      expect((await client.get(`/v1/webhooks/${wh.id}`, p.live)).status).toBe(404)
    } finally {
      await held.release()
    }
    await waitFor(async () => (await deliveriesOf(wh.id)) === 0, {
      what: 'every delivery deleted',
      timeoutMs: 20_000,
    })
    expect(await payloadsOf('del')).toBe(1)
    expect(await deliveriesOf(other.id)).toBe(1)
  })

  it('a replica that stopped between the change and its deliveries: the next start ends them', async () => {
    const disabled = await projectWithReceiver(client, 'crash-disabled', receivers)
    const deleted = await projectWithReceiver(client, 'crash-deleted', receivers)
    await backlog(disabled.wh.id, disabled.projectId, 'cd')
    await backlog(deleted.wh.id, deleted.projectId, 'cx')
    // What the disabling and the deletion had committed when their replica died: the webhooks' own rows.
    await stack.kill('webhook')
    // One of the disabled webhook's retries is due: the worker may find it before the sweep does.
    // Made due once the replica is dead: made due before, the running replica could claim and send
    // it in the moment before the kill, and its 2xx was then recorded as it should be.
    await sql(te, `UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = 'dlv_cd_1'`)
    await sql(te, 'UPDATE webhooks SET enabled = false WHERE id = $1', [disabled.wh.id])
    await sql(te, 'DELETE FROM webhooks WHERE id = $1', [deleted.wh.id])
    await stack.start('webhook')

    await waitFor(
      async () => (await pendingOf(disabled.wh.id)) === 0 && (await deliveriesOf(deleted.wh.id)) === 0,
      { what: 'the deliveries of both webhooks ended', timeoutMs: 20_000 },
    )
    // None was sent: the due one, whoever failed it, counts no attempt more than its own.
    expect(await outcomes(disabled.wh.id)).toEqual(disabledBacklog())
    expect(disabled.receiver.requests).toEqual([])
    expect(await payloadsOf('cx')).toBe(0)
  })

  it('a delivery of a disabled webhook that a replica claims is failed with no attempt counted', async () => {
    // A retry left pending by a disabling (fanned out as it committed, or its replica stopped),
    // due now: the worker claims it and finds the webhook disabled. It was never sent, so it keeps
    // the two attempts the receiver saw (it showed three).
    const { wh, projectId, receiver } = await projectWithReceiver(client, 'claimed-disabled', receivers)
    await sql(te, 'UPDATE webhooks SET enabled = false WHERE id = $1', [wh.id])
    await backlog(wh.id, projectId, 'cl', 1, 0)
    await sql(te, `UPDATE webhook_deliveries SET attempt = 2, next_attempt_at = now() WHERE id = 'dlv_cl_1'`)
    await waitFor(async () => (await pendingOf(wh.id)) === 0, {
      what: 'the delivery failed',
      timeoutMs: 20_000,
    })
    expect(await outcomes(wh.id)).toEqual([
      {
        status: 'failed',
        responseCode: null,
        responseBody: 'webhook disabled',
        attempt: 2,
        noRetry: true,
        n: 1,
      },
    ])
    expect(receiver.requests).toEqual([])
  })
})
