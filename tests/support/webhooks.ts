import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestEnv } from '@mailer/testing'
import { connect, type NatsConnection } from 'nats'
import { sql } from './db.js'
import { type api, createProject } from './http.js'

/** One request a receiver got. */
export interface Received {
  path: string
  headers: IncomingHttpHeaders
  raw: string
  body: any
  at: number
}

/** `after`: answer only once it settles (an attempt kept in flight as long as a test needs). */
export type Reply =
  | { status: number; body?: string | Buffer; headers?: Record<string, string>; after?: Promise<unknown> }
  | 'hang'

/**
 * A real HTTP endpoint on 127.0.0.1 that records every request and answers as `reply` says
 * (`'hang'`: never answer). Tracks how many requests are open at once.
 */
export class Receiver {
  readonly requests: Received[] = []
  open = 0
  maxOpen = 0
  reply: (r: Received, n: number) => Reply = () => ({ status: 200, body: 'ok' })
  private server!: Server
  private port = 0

  /** Not listening yet: `listen()` opens it (`useStack` makes one before its hooks run). */
  constructor(reply?: (r: Received, n: number) => Reply) {
    if (reply) this.reply = reply
  }

  static async start(reply?: (r: Received, n: number) => Reply): Promise<Receiver> {
    const r = new Receiver(reply)
    await r.listen()
    return r
  }

  async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        let body: unknown = raw
        try {
          body = JSON.parse(raw)
        } catch {
          /* keep raw */
        }
        const got: Received = { path: req.url ?? '/', headers: req.headers, raw, body, at: Date.now() }
        this.requests.push(got)
        const answer = this.reply(got, this.requests.length)
        if (answer === 'hang') {
          this.open++
          this.maxOpen = Math.max(this.maxOpen, this.open)
          req.socket.on('close', () => this.open--)
          return
        }
        const send = () => {
          res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers })
          res.end(answer.body ?? '')
        }
        if (answer.after) void answer.after.finally(send)
        else send()
      })
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.port = (this.server.address() as AddressInfo).port
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`
  }

  get portNumber(): number {
    return this.port
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

/**
 * An independent verifier, written from interface.md part 6 alone: split on `,` and each part on
 * the first `=`, `t` within 300 s of our clock, any `v1` equal to the HMAC-SHA256 (hex) of
 * `<t>.<raw body>` keyed by the whole secret as UTF-8, compared in constant time.
 */
export function verifyWebhook(
  header: string | undefined,
  secret: string,
  raw: string,
  nowMs = Date.now(),
): boolean {
  if (!header) return false
  let t: string | undefined
  const sigs: string[] = []
  for (const part of header.split(',')) {
    const i = part.indexOf('=')
    if (i === -1) continue
    const k = part.slice(0, i)
    const v = part.slice(i + 1)
    if (k === 't') t = v
    if (k === 'v1') sigs.push(v)
  }
  if (!t || !/^\d+$/.test(t) || Math.abs(nowMs / 1000 - Number(t)) > 300) return false
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${raw}`, 'utf8').digest()
  return sigs.some((s) => {
    const got = Buffer.from(s, 'hex')
    return s.length === 64 && got.length === expected.length && timingSafeEqual(got, expected)
  })
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
export const fakeId = (prefix: string): string => {
  const bytes = randomBytes(26)
  let s = ''
  for (const b of bytes) s += CROCKFORD[b % 32]
  return `${prefix}_${s}`
}

/** An event payload as the email service stores and publishes it. */
export function makeEvent(
  type = 'email.delivered',
  over: { createdAt?: string; emailId?: string; data?: Record<string, unknown> } = {},
) {
  return {
    id: fakeId('evt'),
    type,
    createdAt: over.createdAt ?? new Date().toISOString(),
    data: {
      emailId: over.emailId ?? fakeId('email'),
      recipient: 'to@example.com',
      from: 'Acme <hello@acme.test>',
      subject: 'Hello',
      tags: { campaign: 'welcome' },
      ...(type === 'email.delivered'
        ? { delivery: { status: 'delivered', provider: 'smtp', deliveryTimeMs: 120 }, terminal: true }
        : {}),
      ...over.data,
    },
  }
}

/** Publishes EventMessages to the test file's EVENTS stream, as the email service would. */
export class EventPublisher {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
  ) {}

  static async connect(te: TestEnv): Promise<EventPublisher> {
    return new EventPublisher(await connect({ servers: te.natsUrl }), te.natsPrefix)
  }

  /** `msgId` defaults to the event id (JetStream drops a duplicate msgId within its window). */
  async publish(projectId: string, event: { id: string; type: string }, msgId = event.id): Promise<void> {
    const js = this.nc.jetstream()
    await js.publish(
      `${this.prefix}.events.${event.type}`,
      new TextEncoder().encode(JSON.stringify({ projectId, event })),
      { msgID: msgId },
    )
  }

  /** Events of any projects in one group message (`events.group`, msgId `g:<first event id>`). */
  async publishGroup(events: Array<{ projectId: string; event: { id: string } }>): Promise<void> {
    const js = this.nc.jetstream()
    await js.publish(`${this.prefix}.events.group`, new TextEncoder().encode(JSON.stringify({ events })), {
      msgID: `g:${events[0]!.event.id}`,
    })
  }

  async close(): Promise<void> {
    await this.nc.close()
  }
}

export { sql }

/**
 * A webhook row written straight into the file's schema, for tests whose webhook service runs
 * where the API cannot create one (a child process, no gateway) or whose URL the API refuses
 * (private addresses); all events unless `events` says otherwise. Returns its id.
 */
export async function insertWebhook(
  te: TestEnv,
  w: { projectId: string; url: string; secret: string; id?: string; events?: string[] },
): Promise<string> {
  const id = w.id ?? fakeId('wh')
  await sql(
    te,
    `INSERT INTO webhooks (id, project_id, url, events, enabled, secret, updated_at)
     VALUES ($1, $2, $3, $4, true, $5, now())`,
    [id, w.projectId, w.url, w.events ?? ['*'], w.secret],
  )
  return id
}

/** A metric's value from a Prometheus text page (0 when absent). */
export async function metricValue(port: number, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}}` : `${name} `))
  return line ? Number(line.split(' ').pop()) : 0
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * A new project with a webhook pointing at a fresh receiver (pushed on `receivers`, for the
 * caller to close); `body` adds to the webhook's create body.
 */
export async function projectWithReceiver(
  client: ReturnType<typeof api>,
  slug: string,
  receivers: Receiver[],
  reply?: (r: Received, n: number) => Reply,
  body: Record<string, unknown> = {},
) {
  const receiver = await Receiver.start(reply)
  receivers.push(receiver)
  const p = await createProject(client, slug)
  const wh = await client.post('/v1/webhooks', p.live, { url: receiver.url(), ...body })
  if (wh.status !== 201) throw new Error(`create webhook: ${wh.status} ${JSON.stringify(wh.body)}`)
  return { receiver, p, wh: wh.body as { id: string; secret: string }, projectId: p.project.id as string }
}

/** A promise the test settles: what a receiver holds an answer on (`Reply.after`). */
export function gate(): { held: Promise<void>; release: () => void } {
  let release!: () => void
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  return { held, release }
}

/** A webhook's deliveries, newest first (its first page). */
export const listDeliveries = async (client: ReturnType<typeof api>, key: string, webhookId: string) =>
  (await client.get(`/v1/webhooks/${webhookId}/deliveries`, key)).body.data as any[]
