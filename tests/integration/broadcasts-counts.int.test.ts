import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { acmeWithAudience, sendBroadcast } from '../support/broadcasts.js'
import { sql } from '../support/db.js'
import { useStack } from '../support/use-stack.js'

// A broadcast's `counts` are stored and recounted in the background (broadcast_email_counts), not
// counted from its emails at every list and get: a page of 50 daily 1M-contact newsletters was
// 50M emails to count per read, past the query timeout, and the list answered 503 for good. The
// recount interval is an hour here, so nothing recounts on its own during a test: a recount is
// made due by hand, as its turn would come. No dispatcher: emails change status by their rows.
const { te, stack, client } = useStack(['auth', 'email', 'broadcast', 'gateway'], {
  env: {
    BROADCAST_POLL_MS: '50',
    BROADCAST_COUNTS_REFRESH_MS: '3600000',
  },
})
let acme: Awaited<ReturnType<typeof acmeWithAudience>>['acme']
let audienceId: string

beforeAll(async () => {
  ;({ acme, audienceId } = await acmeWithAudience(client))
})

/** The broadcast once `sent`, as the first read that finds it sent answers it. */
const sent = (id: string) =>
  waitFor(
    async () => {
      const r = await client.get(`/v1/broadcasts/${id}`, acme.live)
      return r.body.status === 'sent' ? r.body : null
    },
    { timeoutMs: 15_000, what: `broadcast ${id} sent` },
  )

const listed = async (id: string) =>
  (await client.get('/v1/broadcasts?limit=100', acme.live)).body.data.find((b: any) => b.id === id)

/** Makes the broadcast's recount due now (its turn, come early) and waits for these counts. */
async function recounted(id: string, expected: Record<string, number>) {
  await sql(te, 'UPDATE broadcast_email_counts SET due_at = now() WHERE broadcast_id = $1', [id])
  return waitFor(
    async () => {
      const r = await client.get(`/v1/broadcasts/${id}`, acme.live)
      expect(r.body.counts).toEqual(expected)
      return r.body
    },
    { timeoutMs: 15_000, what: `broadcast ${id} recounted` },
  )
}

describe('broadcast counts', () => {
  it('are whole as soon as a broadcast is sent, and follow later status changes at its next recount', async () => {
    const id = await sendBroadcast(client, acme, audienceId)
    // The sender recounts a broadcast as it finishes it: no wait for the refresher.
    expect((await sent(id)).counts).toEqual({ queued: 2 })
    expect((await listed(id)).counts).toEqual({ queued: 2 })

    // One delivered, one bounced (days later, for all the counts know).
    const emails = await sql(te, 'SELECT id FROM emails WHERE broadcast_id = $1 ORDER BY id', [id])
    await sql(te, `UPDATE emails SET status = 'delivered' WHERE id = $1`, [emails[0].id])
    await sql(te, `UPDATE emails SET status = 'bounced' WHERE id = $1`, [emails[1].id])

    // Reads answer the stored counts: neither get nor list counts the emails.
    expect((await client.get(`/v1/broadcasts/${id}`, acme.live)).body.counts).toEqual({ queued: 2 })
    expect((await listed(id)).counts).toEqual({ queued: 2 })

    await recounted(id, { delivered: 1, bounced: 1 })
    expect((await listed(id)).counts).toEqual({ delivered: 1, bounced: 1 })
  })

  it('of a broadcast sent without a stored row (by an older replica) come at the next start, {} meanwhile', async () => {
    const id = await sendBroadcast(client, acme, audienceId)
    await sent(id)
    // As if a replica older than the table had sent it.
    await sql(te, 'DELETE FROM broadcast_email_counts WHERE broadcast_id = $1', [id])
    expect((await client.get(`/v1/broadcasts/${id}`, acme.live)).body.counts).toEqual({})
    expect((await listed(id)).counts).toEqual({})

    // A replica looks for such broadcasts as it starts (and every few minutes).
    await stack.stop('broadcast')
    await stack.start('broadcast')
    await waitFor(
      async () => {
        const r = await client.get(`/v1/broadcasts/${id}`, acme.live)
        expect(r.body.counts).toEqual({ queued: 2 })
        return r.body
      },
      { timeoutMs: 15_000, what: `broadcast ${id} adopted and counted` },
    )
  })
})
