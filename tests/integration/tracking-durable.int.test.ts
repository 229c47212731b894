import { newId } from '@mailer/contracts'
import { waitFor } from '@mailer/testing'
import { simpleParser } from 'mailparser'
import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { streamEvents, streamMessages } from '../support/streams.js'
import { TRACKING_PUBLIC_URL, trackingProject, useTrackingStack } from '../support/tracking-stack.js'
import { metricValue, verifyWebhook } from '../support/webhooks.js'

// Opens and clicks go through the TRACKING stream: a hit made while no email replica runs (a
// restart, a rollout of a single replica) waits there and is recorded once one is back, instead of
// being logged as lost. A hit given to the email service twice is recorded once.
const PUBLIC_URL = TRACKING_PUBLIC_URL
const { te, stack, client, relay, receiver } = useTrackingStack()
let acme: Awaited<ReturnType<typeof trackingProject>>['acme']
let secret: string
let nc: NatsConnection

beforeAll(async () => {
  ;({ acme, secret } = await trackingProject(client, receiver))
  nc = await connect({ servers: te.natsUrl })
})
afterAll(async () => {
  await nc?.close()
})

const TARGET = 'https://shop.example/item?a=1'

/** A delivered email with an open pixel and one tracked link, and the two links (gateway paths). */
async function trackedEmail() {
  const sent = await client.post('/v1/emails', acme.live, {
    from: acme.from,
    to: 'ann@example.com',
    subject: 'Tracked',
    html: `<p><a href="${TARGET}">Buy</a></p>`,
    trackOpens: true,
    trackClicks: true,
  })
  expect(sent.status).toBe(202)
  const d = await waitFor(() => relay.forEmail(sent.body.id)[0], { timeoutMs: 30_000, what: 'delivery' })
  const html = String((await simpleParser(d.raw)).html)
  const path = (re: RegExp) => re.exec(html)![1]!.slice(PUBLIC_URL.length)
  return {
    id: sent.body.id as string,
    pixel: path(/<img src="([^"]+\/t\/o\/[^"]+)"/),
    link: path(/<a href="([^"]+\/t\/c\/[^"]+)"/),
  }
}

const hooksFor = (emailId: string, type: string) =>
  receiver.requests.filter((r) => r.body?.type === type && r.body?.data?.emailId === emailId)

const events = async (id: string, type: string) =>
  ((await client.get(`/v1/emails/${id}`, acme.live)).body.events as any[]).filter((e) => e.type === type)

/** Hits the email service took from the stream, by kind and outcome. */
const hitsHandled = (kind: string, outcome: string) =>
  metricValue(
    stack.metricsPort('email'),
    'mailer_email_tracking_hits_total',
    `kind="${kind}",outcome="${outcome}"`,
  )

/** Publishes straight to the file's TRACKING stream, as the gateway does. */
async function publishHit(hit: Record<string, unknown>, msgID: string) {
  const kind = String(hit.kind ?? 'click')
  await nc.jetstream().publish(`${te.natsPrefix}.tracking.${kind}`, JSON.stringify(hit), { msgID })
}

describe('hits while the email service is down', () => {
  it('are answered at once, wait on the stream, and are recorded and announced once it is back', async () => {
    const { id, pixel, link } = await trackedEmail()
    await stack.stop('email')
    let held: Awaited<ReturnType<typeof streamMessages>>
    try {
      const open = await fetch(stack.gatewayUrl + pixel, { headers: { 'user-agent': 'MailApp/1.0' } })
      expect(open.status).toBe(200)
      expect(open.headers.get('content-type')).toBe('image/gif')
      const click = await fetch(stack.gatewayUrl + link, {
        redirect: 'manual',
        headers: { 'user-agent': 'Web/2' },
      })
      expect(click.status).toBe(302)
      expect(click.headers.get('location')).toBe(TARGET)

      // Both hits are stored, each with its own id as msgID, for whoever consumes next.
      held = await waitFor(
        async () => {
          const mine = (await streamMessages(te, 'TRACKING')).filter((m) => m.data.emailId === id)
          return mine.length === 2 ? mine : null
        },
        { timeoutMs: 30_000, what: 'both hits on the TRACKING stream' },
      )
      expect(held.map((m) => m.subject).sort()).toEqual(['tracking.click', 'tracking.open'])
      for (const m of held) expect(m.msgId).toBe(m.data.id)
      expect(
        await metricValue(
          stack.metricsPort('gateway'),
          'mailer_gateway_tracking_record_failures_total',
          'kind="open"',
        ),
      ).toBe(0)
    } finally {
      // Whatever happened, the next tests need it.
      await stack.start('email')
    }
    const opened = await waitFor(() => hooksFor(id, 'email.opened')[0], {
      timeoutMs: 30_000,
      what: 'opened webhook',
    })
    const clicked = await waitFor(() => hooksFor(id, 'email.clicked')[0], {
      timeoutMs: 30_000,
      what: 'clicked webhook',
    })
    for (const h of [opened, clicked])
      expect(verifyWebhook(h.headers['service-signature'] as string, secret, h.raw)).toBe(true)
    expect(opened.body.data).toMatchObject({
      emailId: id,
      recipient: 'ann@example.com',
      userAgent: 'MailApp/1.0',
    })
    expect(clicked.body.data).toMatchObject({ emailId: id, url: TARGET, userAgent: 'Web/2' })
    // The events take the hits' ids and the time of the hits, not of their recording.
    const hitOf = (kind: string) => held.find((m) => m.data.kind === kind)!.data
    expect(opened.body.id).toBe(hitOf('open').id)
    expect(clicked.body.id).toBe(hitOf('click').id)
    expect(clicked.body.createdAt).toBe(new Date(hitOf('click').at).toISOString())

    const record = (await client.get(`/v1/emails/${id}`, acme.live)).body
    expect(record.openedAt).toBe(new Date(hitOf('open').at).toISOString())
    expect(record.firstClickedAt).toBe(new Date(hitOf('click').at).toISOString())
    expect((await events(id, 'email.opened')).map((e) => e.id)).toEqual([hitOf('open').id])
    expect((await events(id, 'email.clicked')).map((e) => e.id)).toEqual([hitOf('click').id])
    const listed = await client.get(`/v1/events?type=email.clicked&emailId=${id}`, acme.live)
    expect(listed.body.data.map((e: any) => e.id)).toEqual([hitOf('click').id])
  }, 120_000)
})

describe('a hit given twice', () => {
  it('adds one event and one announcement', async () => {
    const { id } = await trackedEmail()
    const before = await hitsHandled('click', 'unchanged')
    const hit = {
      kind: 'click',
      id: newId('event'),
      emailId: id,
      at: new Date().toISOString(),
      userAgent: 'Twice/1',
      requestId: 'req_twice',
      url: TARGET,
    }
    // A redelivery (a crash between the commit and the ack), or a publish tried again after the
    // stream's duplicate window: another message with the same hit.
    await publishHit(hit, hit.id)
    await waitFor(async () => (await events(id, 'email.clicked')).length === 1, {
      timeoutMs: 30_000,
      what: 'the click recorded',
    })
    await publishHit(hit, `${hit.id}:again`)
    await waitFor(async () => (await hitsHandled('click', 'unchanged')) === before + 1, {
      timeoutMs: 30_000,
      what: 'the second delivery handled',
    })

    expect((await events(id, 'email.clicked')).map((e) => e.id)).toEqual([hit.id])
    await waitFor(() => hooksFor(id, 'email.clicked')[0], { timeoutMs: 30_000, what: 'clicked webhook' })
    const announced = (await streamEvents(te)).filter((m) => m.event.id === hit.id)
    expect(announced).toHaveLength(1)
    expect(hooksFor(id, 'email.clicked')).toHaveLength(1)
  }, 120_000)

  it('a malformed hit is terminated and does not hold up the next', async () => {
    const { id } = await trackedEmail()
    const invalid = await hitsHandled('unknown', 'invalid')
    await publishHit({ kind: 'click', emailId: id }, newId('event'))
    const hit = {
      kind: 'open',
      id: newId('event'),
      emailId: id,
      at: new Date().toISOString(),
      userAgent: null,
      requestId: 'req_open',
    }
    await publishHit(hit, hit.id)
    await waitFor(async () => (await events(id, 'email.opened')).length === 1, {
      timeoutMs: 30_000,
      what: 'the open recorded',
    })
    await waitFor(async () => (await hitsHandled('unknown', 'invalid')) === invalid + 1, {
      timeoutMs: 30_000,
      what: 'the malformed hit terminated',
    })
  }, 120_000)
})

describe('a hit the stream cannot take', () => {
  it('still gets its redirect at once, and is counted as lost after the retries', async () => {
    const { link } = await trackedEmail()
    const port = stack.metricsPort('gateway')
    const lost = () => metricValue(port, 'mailer_gateway_tracking_record_failures_total', 'kind="click"')
    const before = await lost()
    // No stream on the subject (a NATS that lost its store, before the gateway declares it again).
    await (await nc.jetstreamManager()).streams.delete(`${te.natsPrefix.toUpperCase()}_TRACKING`)

    const click = await fetch(stack.gatewayUrl + link, { redirect: 'manual' })
    expect(click.status).toBe(302)
    expect(click.headers.get('location')).toBe(TARGET)
    await waitFor(async () => (await lost()) === before + 1, {
      timeoutMs: 60_000,
      what: 'the lost click counted',
    })
  }, 120_000)
})
