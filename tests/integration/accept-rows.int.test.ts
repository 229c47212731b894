import { newId } from '@mailer/contracts'
import { createPgPool, type PgPool } from '@mailer/db'
import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EmailSummary, eventMessage, timelineRow } from '../../libs/email-core/src/index.js'
import { counterWindows } from '../../services/email/src/domain/limits.js'
import type { PreparedSend } from '../../services/email/src/domain/prepare.js'
import { type StoreRequest, storeMany } from '../../services/email/src/infra/accept-store.js'
import { preparedSend } from '../support/prepared-send.js'

/*
 * The accept statements build each event's timeline row and message in SQL from the event alone
 * (accept-sql.ts), and leave empty values out of their parameters: what they store must be what
 * @mailer/email-core's timelineRow and eventMessage make of the same event, and the columns' empty
 * values, on both write paths (one statement, and step by step once a limit would be passed).
 */
const te = useTestEnv()
let pool: PgPool

beforeAll(async () => {
  pool = createPgPool(te.databaseUrl, { max: 2 })
})
afterAll(async () => {
  await pool?.end()
})

const send = (over: Partial<PreparedSend> = {}) =>
  preparedSend({
    input: { tags: { kind: 'otp' } } as never,
    from: 'Acme <a@rows.test>',
    recipients: [
      { address: 'b@example.com', kind: 'to' },
      { address: 'c@example.com', kind: 'cc' },
    ],
    html: '<p>Hi</p>',
    text: null,
    ...over,
  })

function request(mode: 'live' | 'test', rateLimit: number): StoreRequest {
  const projectId = newId('project')
  const now = new Date()
  const scheduledAt = new Date(now.getTime() + 3_600_000)
  return {
    requestId: 'req_test',
    projectId,
    apiKeyId: null,
    mode,
    source: 'api',
    now,
    retentionDays: 30,
    limits: mode === 'live' ? { windows: counterWindows(now, 60), rateLimit, dailyLimit: 0 } : null,
    emails: [
      { id: newId('email'), send: send(), key: null, status: mode === 'live' ? 'queued' : 'test' },
      {
        id: newId('email'),
        send: send({
          scheduledAt,
          input: {} as never,
          recipients: [{ address: 'd@example.com', kind: 'to' }],
        }),
        key: 'k-1',
        status: mode === 'live' ? 'scheduled' : 'test',
      },
    ],
  }
}

async function stored(req: StoreRequest) {
  const ids = req.emails.map((e) => e.id)
  const { rows: events } = await pool.query(
    `SELECT id, project_id, email_id, mode, type, recipient, payload, created_at FROM email_events
     WHERE email_id = ANY($1::text[]) ORDER BY id`,
    [ids],
  )
  const { rows: emails } = await pool.query(
    `SELECT id, reply_to, "to", cc, bcc, tags, text_preview, track_opens, track_clicks, api_key_id,
       idempotency_key, request_hash, queued_at, scheduled_at FROM emails WHERE id = ANY($1::text[]) ORDER BY id`,
    [ids],
  )
  const { rows: contents } = await pool.query(
    'SELECT headers, attachments, text FROM email_contents WHERE email_id = ANY($1::text[]) ORDER BY email_id',
    [ids],
  )
  const { rows: recipients } = await pool.query(
    'SELECT email_id, address, kind, status FROM email_recipients WHERE email_id = ANY($1::text[]) ORDER BY email_id, address',
    [ids],
  )
  return { events, emails, contents, recipients }
}

const summaryOf = (req: StoreRequest, i: number): EmailSummary => ({
  id: req.emails[i]!.id,
  projectId: req.projectId,
  mode: req.mode,
  from: req.emails[i]!.send.from,
  subject: req.emails[i]!.send.subject,
  tags: (req.emails[i]!.send.input.tags as Record<string, string>) ?? {},
})

describe.each([
  ['in one statement', 1_000],
  ['step by step (a limit would be passed)', 1],
])('accepted emails stored %s', (_, rateLimit) => {
  it.each(['live', 'test'] as const)(
    '%s: events as timelineRow and eventMessage make them, empty values as empty',
    async (mode) => {
      const req = request(mode, rateLimit)
      const [result] = await storeMany(pool, [req])
      const { events, emails, contents, recipients } = await stored(req)

      // Step by step with a rate limit of 1, the limit admits the first live email only.
      const kept = req.emails.filter((e) => result!.accepted.has(e.id)).map((e) => e.id)
      expect(kept).toHaveLength(mode === 'live' && rateLimit === 1 ? 1 : 2)
      expect(events.map((e) => e.email_id).sort()).toEqual([...kept].sort())
      const published: unknown[] = []
      for (const row of events) {
        const i = req.emails.findIndex((e) => e.id === row.email_id)
        const expected = timelineRow(summaryOf(req, i), row.payload)
        expect({ ...row, created_at: row.created_at.toISOString() }).toEqual(expected)
        const m = eventMessage(summaryOf(req, i), row.payload)
        if (m) published.push(m.payload)
      }
      expect(events.map((e) => e.type).sort()).toEqual(
        mode === 'test'
          ? ['email.test', 'email.test']
          : ['email.queued', 'email.scheduled'].slice(0, kept.length),
      )
      // The messages to publish: the events of a live email (group messages in one statement).
      const sent = result!.outboxRows.flatMap((r) => {
        const p = r.payload as { events?: unknown[] }
        return r.subject.startsWith('events.') ? (p.events ?? [p]) : []
      })
      expect(sent).toEqual(expect.arrayContaining(published))
      expect(sent).toHaveLength(published.length)
      if (mode === 'test') expect(published).toEqual([])

      const expected = [
        {
          id: req.emails[0]!.id,
          reply_to: [],
          to: ['b@example.com'],
          cc: ['c@example.com'],
          bcc: [],
          tags: { kind: 'otp' },
          text_preview: 'Hi',
          track_opens: false,
          track_clicks: false,
          api_key_id: null,
          idempotency_key: null,
          request_hash: null,
          queued_at: mode === 'live',
          scheduled_at: false,
        },
        {
          id: req.emails[1]!.id,
          reply_to: [],
          to: ['d@example.com'],
          cc: [],
          bcc: [],
          tags: {},
          text_preview: 'Hi',
          track_opens: false,
          track_clicks: false,
          api_key_id: null,
          idempotency_key: 'k-1',
          request_hash: 'h',
          queued_at: false,
          scheduled_at: true,
        },
      ].filter((e) => kept.includes(e.id))
      expect(
        emails.map((e) => ({ ...e, queued_at: e.queued_at !== null, scheduled_at: e.scheduled_at !== null })),
      ).toEqual(expected)
      expect(contents).toEqual(kept.map(() => ({ headers: {}, attachments: [], text: null })))
      const recipientCount = kept.length === 1 ? 2 : 3
      expect(recipients.map((r) => r.status)).toEqual(
        Array(recipientCount).fill(mode === 'live' ? 'queued' : 'test'),
      )
    },
  )
})
