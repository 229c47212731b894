import { MailerError } from '@mailer/contracts'
import { createDb } from '@mailer/db'
import { createLogger, Metrics } from '@mailer/observability'
import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { Bus } from '../src/bus.js'
import { Outbox } from '../src/outbox.js'
import { ensureStream } from '../src/streams.js'
import { UnpublishableMessage } from '../src/unpublishable.js'
import { Unreachable } from '../src/unreachable.js'

const te = useTestEnv()
let server: Bus
let client: Bus

beforeAll(async () => {
  const logger = createLogger({ service: 'bus-test', level: 'silent' })
  server = await Bus.connect({
    url: te.natsUrl,
    prefix: te.natsPrefix,
    name: 'server',
    logger,
    metrics: new Metrics('bus_server'),
  })
  client = await Bus.connect({
    url: te.natsUrl,
    prefix: te.natsPrefix,
    name: 'client',
    logger,
    metrics: new Metrics('bus_client'),
  })
  server.serve(
    'echo',
    z.object({ n: z.number() }),
    async ({ n }) => {
      if (n < 0) throw new MailerError('invalid_body', 'negative', { param: 'n' })
      if (n === 0) throw new Error('boom')
      if (n === 503) throw new MailerError('service_unavailable', 'database away')
      if (n > 1000) await new Promise((r) => setTimeout(r, 500))
      return { doubled: n * 2 }
    },
    { queue: 'svc' },
  )
  await server.flush()
})
afterAll(async () => {
  await client.drain()
  await server.drain()
})

describe('request-reply', () => {
  it('returns the result', async () => {
    expect(await client.request('echo', { n: 2 })).toEqual({ doubled: 4 })
  })
  it('rebuilds typed errors on the caller side', async () => {
    const err = await client.request('echo', { n: -1 }).catch((e) => e)
    expect(err).toBeInstanceOf(MailerError)
    expect(err).toMatchObject({ code: 'invalid_body', status: 400, param: 'n' })
  })
  it('hides unexpected errors behind 500 internal', async () => {
    const err: any = await client.request('echo', { n: 0 }).catch((e) => e)
    expect(err).toMatchObject({ code: 'internal', status: 500 })
    expect(err.message).not.toContain('boom')
  })
  it('rejects malformed requests with invalid_body', async () => {
    const err = await client.request('echo', { n: 'x' }).catch((e) => e)
    expect(err).toMatchObject({ code: 'invalid_body' })
  })
  it('turns no responders and timeouts into 503 service_unavailable', async () => {
    const none = await client.request('nobody.home', {}).catch((e) => e)
    expect(none).toMatchObject({ code: 'service_unavailable', status: 503 })
    const slow = await client.request('echo', { n: 5000 }, { timeoutMs: 100 }).catch((e) => e)
    expect(slow).toMatchObject({ code: 'service_unavailable', status: 503 })
    // Told apart from a 503 the responder sent: only these say the service could not be reached.
    expect([none, slow].map((e) => e instanceof Unreachable)).toEqual([true, true])
    const answered = await client.request('echo', { n: 503 }).catch((e) => e)
    expect(answered).toMatchObject({ code: 'service_unavailable', status: 503 })
    expect(answered).not.toBeInstanceOf(Unreachable)
  })
  it('prefixes subjects and stream names', () => {
    expect(client.subject('a.b')).toBe(`${te.natsPrefix}.a.b`)
    expect(client.streamName('EVENTS')).toBe(`${te.natsPrefix.toUpperCase()}_EVENTS`)
  })
})

describe('concurrent requests share one inbox', () => {
  it('each caller gets its own answer', async () => {
    const ns = Array.from({ length: 200 }, (_, i) => i + 1)
    const answers = await Promise.all(ns.map((n) => client.request('echo', { n })))
    expect(answers).toEqual(ns.map((n) => ({ doubled: n * 2 })))
  })
})

describe('publishDurable', () => {
  beforeAll(async () => {
    await ensureStream(client, { name: 'DURABLE', subjects: ['durable.>'] })
  })
  const data = new TextEncoder().encode('{"x":1}')

  it('answers the stream acknowledgement, and a repeated message id as a duplicate', async () => {
    const first = await client.publishDurable(client.subject('durable.a'), data, 'm-1')
    expect(first).toMatchObject({ stream: client.streamName('DURABLE'), duplicate: false })
    const again = await client.publishDurable(client.subject('durable.a'), data, 'm-1')
    expect(again).toMatchObject({ seq: first.seq, duplicate: true })
    const info = await client.jsm.streams.info(client.streamName('DURABLE'))
    expect(info.state.messages).toBe(1)
  })

  it('many at once each get their own sequence number', async () => {
    const acks = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        client.publishDurable(client.subject('durable.b'), data, `b-${i}`),
      ),
    )
    expect(new Set(acks.map((a) => a.seq)).size).toBe(100)
  })

  it('throws when no stream takes the subject', async () => {
    const err = await client.publishDurable(client.subject('nowhere.x'), data, 'n-1').catch((e) => e)
    expect(err).toBeInstanceOf(Error)
    expect(String(err.message)).toMatch(/no responders/)
  })
})

describe('outbox', () => {
  it('stop() waits for publishes left running, then deletes their rows', async () => {
    await ensureStream(client, { name: 'OUTBOXED', subjects: ['outboxed.>'] })
    const db = createDb(te.databaseUrl)
    const outbox = new Outbox(
      db,
      client,
      createLogger({ service: 'outbox-test', level: 'silent' }),
      new Metrics('outbox_test'),
    )
    try {
      const rows = await outbox.write(
        db,
        Array.from({ length: 20 }, (_, i) => ({ subject: 'outboxed.e', msgId: `o-${i}`, payload: { i } })),
      )
      void outbox.publish(rows)
      await outbox.stop()
      const info = await client.jsm.streams.info(client.streamName('OUTBOXED'))
      expect(info.state.messages).toBe(20)
      expect(await db.outboxMessage.count()).toBe(0)
    } finally {
      await db.$disconnect()
    }
  })
})

describe('outbox sweeper', () => {
  it('passes over a message larger than NATS takes and publishes the ones after it; keeps it', async () => {
    await ensureStream(client, { name: 'SWEPT', subjects: ['swept.>'] })
    const db = createDb(te.databaseUrl)
    const outbox = new Outbox(
      db,
      client,
      createLogger({ service: 'outbox-test', level: 'silent' }),
      new Metrics('outbox_sweep_test'),
      { graceMs: 0 },
    )
    try {
      // Left behind by a process that died after its commit: the oversized one first.
      await outbox.write(db, [
        { subject: 'swept.e', msgId: 's-big', payload: { pad: 'x'.repeat(client.maxPayload) } },
        { subject: 'swept.e', msgId: 's-1', payload: { i: 1 } },
        { subject: 'swept.e', msgId: 's-2', payload: { i: 2 } },
      ])
      expect(await outbox.sweep()).toBe(2)
      const info = await client.jsm.streams.info(client.streamName('SWEPT'))
      expect(info.state.messages).toBe(2)
      const left = await db.outboxMessage.findMany({ select: { msgId: true } })
      expect(left.map((r) => r.msgId)).toEqual(['s-big'])
      // Later passes do not stop at it either.
      await outbox.write(db, [{ subject: 'swept.e', msgId: 's-3', payload: { i: 3 } }])
      expect(await outbox.sweep()).toBe(1)
    } finally {
      await db.outboxMessage.deleteMany({})
      await outbox.stop()
      await db.$disconnect()
    }
  })
})

describe('publishDurable near max_payload', () => {
  it('counts the Nats-Msg-Id header in the limit: a body that fits only without it is unpublishable', async () => {
    await ensureStream(client, { name: 'NEARMAX', subjects: ['nearmax.>'] })
    // 10 bytes under the limit as JSON, over it with the header NATS counts too.
    const body = new TextEncoder().encode(JSON.stringify({ pad: 'x'.repeat(client.maxPayload - 20) }))
    expect(body.length).toBe(client.maxPayload - 10)
    const err = await client
      .publishDurable(client.subject('nearmax.e'), body, 'near-max')
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UnpublishableMessage)
    // A small one still goes out.
    await client.publishDurable(client.subject('nearmax.e'), new TextEncoder().encode('{}'), 'small')
  })
})

describe('ensureStream replicas', () => {
  it('leaves the replicas alone unless NATS_STREAM_REPLICAS is set, and a refused count fails the start', async () => {
    const logger = createLogger({ service: 'bus-test', level: 'silent' })
    const withReplicas = (n: number) =>
      Bus.connect({
        url: te.natsUrl,
        prefix: te.natsPrefix,
        name: `replicas-${n}`,
        logger,
        metrics: new Metrics(`bus_replicas_${n}`),
        streamReplicas: n,
      })
    await ensureStream(client, { name: 'REPLICATED', subjects: ['replicated.>'] })
    // A byte limit set by hand survives a later start, as a hand-set replica count would.
    await client.jsm.streams.update(client.streamName('REPLICATED'), { max_bytes: 1_000_000 })
    await ensureStream(client, { name: 'REPLICATED', subjects: ['replicated.>'] })
    const info = await client.jsm.streams.info(client.streamName('REPLICATED'))
    expect(info.config).toMatchObject({ num_replicas: 1, max_bytes: 1_000_000 })

    const one = await withReplicas(1)
    const three = await withReplicas(3)
    try {
      await ensureStream(one, { name: 'REPLICATED', subjects: ['replicated.>'] })
      expect((await one.jsm.streams.info(one.streamName('REPLICATED'))).config.num_replicas).toBe(1)
      // This test server is a single node: three replicas are refused, loudly, not ignored.
      const err = await ensureStream(three, { name: 'REPLICATED3', subjects: ['replicated3.>'] }).catch(
        (e: Error) => e,
      )
      expect(err).toBeInstanceOf(Error)
      expect(String((err as Error).message)).toMatch(/replica/i)
    } finally {
      await one.drain()
      await three.drain()
    }
  })
})

describe('ensureStream limits', () => {
  it('a work queue with its age, a byte limit given at creation only, new messages refused when full', async () => {
    const def = {
      name: 'QUEUED',
      subjects: ['queued.>'],
      workQueue: true,
      maxAgeSeconds: 3600,
      maxBytesAtCreation: 4096,
      discardNew: true,
    }
    await ensureStream(client, def)
    const name = client.streamName('QUEUED')
    expect((await client.jsm.streams.info(name)).config).toMatchObject({
      retention: 'workqueue',
      max_age: 3600 * 1e9,
      max_bytes: 4096,
      discard: 'new',
    })
    // Full: the publisher is told, and what the stream holds stays.
    const body = new Uint8Array(1500).fill(32)
    await client.publishDurable(client.subject('queued.a'), body, 'a')
    await client.publishDurable(client.subject('queued.a'), body, 'b')
    const err = await client.publishDurable(client.subject('queued.a'), body, 'c').catch((e: Error) => e)
    expect(err).toBeInstanceOf(Error)
    expect((await client.jsm.streams.info(name)).state.messages).toBe(2)
    // A byte limit an operator set survives the next start.
    await client.jsm.streams.update(name, { max_bytes: 1_000_000 })
    await ensureStream(client, def)
    expect((await client.jsm.streams.info(name)).config.max_bytes).toBe(1_000_000)
  })
})

describe('shutting down', () => {
  it('stopServing answers the requests it holds, takes no new one, and keeps listening until drain', async () => {
    const logger = createLogger({ service: 'bus-test', level: 'silent' })
    const svc = await Bus.connect({
      url: te.natsUrl,
      prefix: te.natsPrefix,
      name: 'stopping',
      logger,
      metrics: new Metrics('bus_stopping'),
    })
    const heard: unknown[] = []
    svc.serve(
      'stopping.slow',
      z.object({ n: z.number() }),
      async ({ n }) => {
        await new Promise((r) => setTimeout(r, 300))
        return { n }
      },
      { queue: 'stopping' },
    )
    svc.subscribeInvalidations('stopping.note', {
      onMessage: (m) => heard.push(m),
      onMissed: () => undefined,
    })
    await svc.flush()

    const held = client.request('stopping.slow', { n: 1 })
    await new Promise((r) => setTimeout(r, 100))
    const stopping = svc.stopServing()
    const late = await client.request('stopping.slow', { n: 2 }, { timeoutMs: 1_000 }).catch((e) => e)
    expect(late).toMatchObject({ code: 'service_unavailable', status: 503 })
    expect(await held).toEqual({ n: 1 })
    await stopping

    client.publish('stopping.note', { revoked: 'key_1' })
    await client.flush()
    await expect.poll(() => heard).toEqual([{ revoked: 'key_1' }])
    await svc.drain()
  })
})
