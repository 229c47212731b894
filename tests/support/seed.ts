import { generateKeyPairSync } from 'node:crypto'
import { type DispatchMessage, type EventMessage, EventsOnStream, newId } from '@mailer/contracts'
import type { TestEnv } from '@mailer/testing'
import { connect, type NatsConnection } from 'nats'
import pg from 'pg'

/**
 * Direct access to a test file's schema and streams, for tests of the dispatcher that should not
 * depend on the accept side: seed emails as the email service stores them, and publish their
 * dispatch messages as it does.
 */
export class Seeder {
  private pool!: pg.Pool
  private nc!: NatsConnection

  /** Not connected yet: `connect()` does it (`useStack` makes one before its hooks run). */
  constructor(private readonly te: TestEnv) {}

  static async open(te: TestEnv): Promise<Seeder> {
    const s = new Seeder(te)
    await s.connect()
    return s
  }

  async connect(): Promise<void> {
    const url = new URL(this.te.databaseUrl)
    const schema = url.searchParams.get('schema')!
    url.searchParams.delete('schema')
    this.pool = new pg.Pool({
      connectionString: url.toString(),
      options: `-c search_path=${schema}`,
      max: 4,
    })
    this.nc = await connect({ servers: this.te.natsUrl })
  }

  async sql<T = any>(text: string, params: unknown[] = []): Promise<T[]> {
    return (await this.pool.query(text, params)).rows as T[]
  }

  /** A verified sending domain with a fresh 2048-bit DKIM key; returns its DNS TXT record. */
  async domain(projectId: string, name: string): Promise<{ selector: string; txtName: string; txt: string }> {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'der' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    })
    const selector = 'mailer1'
    const p = publicKey.toString('base64')
    await this.sql(
      `INSERT INTO domains (id, project_id, name, verification, dkim_selector, dkim_private_key, dkim_public_key)
       VALUES ($1, $2, $3, 'verified', $4, $5, $6)`,
      [newId('domain'), projectId, name, selector, privateKey, p],
    )
    return { selector, txtName: `${selector}._domainkey.${name}`, txt: `v=DKIM1; k=rsa; p=${p}` }
  }

  /** Inserts a queued live email with its recipients and content, as the email service stores it. */
  async email(projectId: string, e: SeedEmail): Promise<string> {
    const id = newId('email')
    const cc = e.cc ?? []
    const bcc = e.bcc ?? []
    await this.sql(
      `INSERT INTO emails (id, project_id, mode, source, status, from_address, reply_to, "to", cc, bcc, subject, tags, queued_at)
       VALUES ($1, $2, 'live', 'http', 'queued', $3, $4, $5, $6, $7, $8, $9, now())`,
      [id, projectId, e.from, e.replyTo ?? [], e.to, cc, bcc, e.subject, JSON.stringify(e.tags ?? {})],
    )
    const recipients = [
      ...e.to.map((a) => [a, 'to']),
      ...cc.map((a) => [a, 'cc']),
      ...bcc.map((a) => [a, 'bcc']),
    ]
    await this.sql(
      `INSERT INTO email_recipients (email_id, address, kind) SELECT $1, a, k FROM unnest($2::text[], $3::text[]) AS t(a, k)`,
      [id, recipients.map((r) => r[0]), recipients.map((r) => r[1])],
    )
    await this.sql(
      `INSERT INTO email_contents (email_id, html, text, headers, attachments, expires_at)
       VALUES ($1, $2, $3, $4, $5, now() + interval '30 days')`,
      [
        id,
        e.html ?? null,
        e.text ?? null,
        JSON.stringify(e.headers ?? {}),
        JSON.stringify((e.attachments ?? []).map(stored)),
      ],
    )
    return id
  }

  /** Publishes a group dispatch message (`{ emailIds }`, as the email service writes them). */
  async dispatchGroup(emailIds: string[], msgId: string): Promise<void> {
    const js = this.nc.jetstream()
    const msg: DispatchMessage = { emailIds }
    await js.publish(`${this.te.natsPrefix}.emails.dispatch`, new TextEncoder().encode(JSON.stringify(msg)), {
      msgID: msgId,
    })
  }

  /**
   * Publishes a one-email dispatch message (msgID `<emailId>:<attempt>`), the shape earlier
   * versions wrote and the dispatcher still reads.
   */
  async dispatch(emailId: string, projectId: string, attempt = 0): Promise<void> {
    const js = this.nc.jetstream()
    const msg: DispatchMessage = { emailId, projectId, attempt }
    await js.publish(`${this.te.natsPrefix}.emails.dispatch`, new TextEncoder().encode(JSON.stringify(msg)), {
      msgID: `${emailId}:${attempt}`,
    })
  }

  /**
   * Stands in for the email service's due sweeper: every `everyMs`, takes queued/deferred emails
   * whose retry is due, clears `next_attempt_at` and publishes attempt `attempts`.
   */
  startRetrySweeper(everyMs = 100): { stop(): void } {
    let running = false
    const timer = setInterval(async () => {
      if (running) return
      running = true
      try {
        const due = await this.sql<{ id: string; project_id: string; attempts: number }>(
          `UPDATE emails SET next_attempt_at = NULL
           WHERE status IN ('queued', 'deferred') AND next_attempt_at <= now()
           RETURNING id, project_id, attempts`,
        )
        for (const d of due) await this.dispatch(d.id, d.project_id, d.attempts)
      } finally {
        running = false
      }
    }, everyMs)
    return { stop: () => clearInterval(timer) }
  }

  /** True once the dispatcher's consumer has handled (acked or dropped) every dispatch message. */
  async dispatchDrained(): Promise<boolean> {
    const jsm = await this.nc.jetstreamManager()
    const info = await jsm.consumers.info(
      `${this.te.natsPrefix.toUpperCase()}_EMAILS`,
      `${this.te.natsPrefix}-dispatcher-send`,
    )
    return info.num_pending === 0 && info.num_ack_pending === 0
  }

  /** Every event on this file's EVENTS stream so far, one or a group per message (what webhooks and analytics consume). */
  async publishedEvents(): Promise<EventMessage[]> {
    const js = this.nc.jetstream()
    const jsm = await this.nc.jetstreamManager()
    const stream = `${this.te.natsPrefix.toUpperCase()}_EVENTS`
    const { state } = await jsm.streams.info(stream)
    const out: EventMessage[] = []
    if (state.messages === 0) return out
    const consumer = await js.consumers.get(stream)
    const iter = await consumer.fetch({ max_messages: state.messages, expires: 2_000 })
    let read = 0
    for await (const m of iter) {
      out.push(...EventsOnStream.parse(m.json()))
      if (++read >= state.messages) break
    }
    return out
  }

  async close(): Promise<void> {
    await this.nc.close()
    await this.pool.end()
  }
}

/** An attachment in the shape the email service stores: every field present, with its decoded size. */
const stored = (a: NonNullable<SeedEmail['attachments']>[number]) => ({
  filename: a.filename,
  content: a.content,
  type: a.type ?? 'application/octet-stream',
  disposition: a.disposition ?? 'attachment',
  contentId: a.contentId ?? null,
  size: Buffer.from(a.content, 'base64').length,
})

export interface SeedEmail {
  from: string
  to: string[]
  cc?: string[]
  bcc?: string[]
  replyTo?: string[]
  subject: string
  html?: string
  text?: string
  headers?: Record<string, string>
  attachments?: Array<{
    filename: string
    content: string
    type?: string
    disposition?: 'attachment' | 'inline'
    contentId?: string
  }>
  tags?: Record<string, string>
}
