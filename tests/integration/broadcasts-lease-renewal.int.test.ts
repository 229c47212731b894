import { start } from '@mailer/broadcast/app'
import { loadEnv } from '@mailer/broadcast/env'
import { waitFor } from '@mailer/testing'
import { connect, type Msg, type NatsConnection } from 'nats'
import { describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { spawnService } from '../support/processes.js'
import { useStack } from '../support/use-stack.js'
import { sleep } from '../support/webhooks.js'

// The lease of a broadcast being sent is short (BROADCAST_LEASE_SECONDS, 15 s) and renewed while
// its replica works it. A replica killed mid-chunk gives the broadcast up about 15 s later (it was
// 60 s, the lease a chunk had to fit in), and a live one keeps it however long a chunk takes.
// The email service is played by the test over NATS, so that a chunk takes as long as it says.
const { te, stack, client } = useStack(['auth', 'broadcast', 'gateway'], {
  before: async () => {
    email = await FakeEmail.start(te.natsUrl, `${te.natsPrefix}.api.email.emails.send-batch`)
  },
  after: () => email.close(),
})
let email: FakeEmail

/** The email service's batch route: dry runs answered at once, sends when `answer` says. */
class FakeEmail {
  /** The idempotency keys of each batch sent (not dry runs), in order. */
  readonly batches: string[][] = []
  /** How the n-th batch (from 1) is answered: now, or once the promise settles. */
  answer: (n: number) => Promise<unknown> | null = () => null

  private constructor(private readonly nc: NatsConnection) {}

  static async start(url: string, subject: string): Promise<FakeEmail> {
    const f = new FakeEmail(await connect({ servers: url }))
    f.nc.subscribe(subject, { callback: (_err, msg) => void f.serve(msg) })
    await f.nc.flush()
    return f
  }

  private async serve(msg: Msg): Promise<void> {
    const req = msg.json<{ query: { dryRun?: string }; body: Array<{ idempotencyKey: string }> }>()
    if (req.query.dryRun === 'true') {
      msg.respond(JSON.stringify({ data: req.body.map(() => ({ id: null, status: 'test' })) }))
      return
    }
    this.batches.push(req.body.map((i) => i.idempotencyKey))
    await this.answer(this.batches.length)
    msg.respond(
      JSON.stringify({
        data: req.body.map((_, i) => ({ id: `em_${this.batches.length}_${i}`, status: 'test' })),
      }),
    )
  }

  close(): Promise<void> {
    return this.nc.close()
  }
}

/** A test-mode broadcast to three contacts (one chunk), sent now. */
async function sendBroadcast(slug: string): Promise<{ id: string; key: string }> {
  const p = await createProject(client, slug)
  const audienceId = (await client.post('/v1/audiences', p.test, { name: 'Three' })).body.id
  await client.post(
    `/v1/contacts/import?audienceId=${audienceId}`,
    p.test,
    ['a', 'b', 'c'].map((n) => ({ email: `${n}@example.com` })),
  )
  const b = await client.post('/v1/broadcasts', p.test, {
    audienceId,
    from: 'news@example.com',
    subject: 'Hello',
    html: '<p>Hi</p><a href="{{unsubscribe_url}}">Unsubscribe</a>',
  })
  expect(b.status).toBe(201)
  expect((await client.post(`/v1/broadcasts/${b.body.id}/send`, p.test)).status).toBe(202)
  return { id: b.body.id, key: p.test }
}

const waitSent = (b: { id: string; key: string }, timeoutMs: number, what: string) =>
  waitFor(
    async () => ((await client.get(`/v1/broadcasts/${b.id}`, b.key)).body.status === 'sent' ? true : null),
    { timeoutMs, what },
  )

describe('a broadcast replica killed mid-chunk', () => {
  it('with the default settings, another replica finishes the broadcast within about 15 s, not 60 s', async () => {
    email.answer = (n) => (n === 1 ? new Promise(() => undefined) : null)
    email.batches.length = 0
    await stack.stop('broadcast')
    const killed = await spawnService('broadcast', stack.env())
    let b: { id: string; key: string }
    try {
      b = await sendBroadcast('lease-killed')
      await waitFor(() => email.batches.length >= 1 || null, { what: 'the first chunk at the email service' })
      // Long enough for renewals: the lease that runs out is the last renewed one.
      await sleep(6000)
    } finally {
      await killed.kill()
      await stack.start('broadcast')
    }
    // The lease ends at most 15 s after the kill (renewed 5 s apart), then a poll (1 s) claims it.
    await waitSent(b, 25_000, 'the broadcast finished by the other replica')
    // The chunk was sent again under the same keys (the email service takes a repeat as a no-op).
    expect(email.batches).toHaveLength(2)
    expect(email.batches[1]).toEqual(email.batches[0])
  }, 60_000)

  it('a replica whose chunk outlasts the lease keeps the broadcast, and gives it up soon once killed', async () => {
    email.answer = (n) => (n === 1 ? new Promise(() => undefined) : null)
    email.batches.length = 0
    await stack.stop('broadcast')
    const slow = await spawnService('broadcast', stack.env())
    let b: { id: string; key: string }
    let other: Awaited<ReturnType<typeof start>> | undefined
    try {
      b = await sendBroadcast('lease-live')
      await waitFor(() => email.batches.length >= 1 || null, { what: 'the first chunk at the email service' })
      // A second replica looks for due broadcasts every second meanwhile.
      other = await start(loadEnv(stack.env()))
      // Past the 15 s lease the chunk began with (within the 30 s send time-out): renewed, the
      // broadcast is still the slow replica's, and nobody else sent its chunk.
      await sleep(18_000)
      expect(email.batches).toHaveLength(1)
      expect((await client.get(`/v1/broadcasts/${b.id}`, b.key)).body.status).toBe('sending')
    } finally {
      await slow.kill()
    }
    try {
      await waitSent(b, 20_000, 'the broadcast finished by the other replica')
      expect(email.batches).toHaveLength(2)
      expect(email.batches[1]).toEqual(email.batches[0])
    } finally {
      await other?.stop()
      await stack.start('broadcast')
    }
  }, 60_000)
})
