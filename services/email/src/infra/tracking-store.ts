import { OUTBOX_ROWS_JSON, outboxRowsOf } from '@mailer/bus'
import type { TrackingHit } from '@mailer/contracts'
import { inTransaction, jsonColumn, type PgPool } from '@mailer/db'
import { eventGroupsCte, eventMessage, timelineRow } from '@mailer/email-core'
import type { OutboxRows } from '../app.js'
import { planHits, type TrackedEmail } from '../domain/tracking-plan.js'

interface Row {
  id: string
  project_id: string
  mode: string
  from_address: string
  subject: string
  tags: Record<string, string> | null
  to: string[]
  cc: string[]
  bcc: string[]
  opened_at: Date | null
  first_clicked_at: Date | null
}

/**
 * The emails the hits name, locked in id order until the commit: two replicas' groups naming the
 * same emails wait for each other instead of deadlocking, and what planHits reads (opened_at,
 * first_clicked_at) cannot change before the write.
 */
const LOCK_SQL = `
SELECT id, project_id, mode, from_address, subject, tags, "to", cc, bcc, opened_at, first_clicked_at
FROM emails WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE`

/**
 * The group's writes in one statement: the emails' columns ($1), the events on the timeline ($2,
 * once per id: a hit recorded before adds nothing) and, for the events actually added, their
 * group messages ($3, eventGroupsCte: up to 100 events per outbox row, as the accept and the
 * dispatcher announce theirs; one message per event cost a JetStream publish and ack each, and a
 * consumer delivery each, while a backlog drained). Answers the ids of the events added and the
 * outbox rows to publish after the commit.
 */
const WRITE_SQL = `
WITH u AS (
  UPDATE emails e SET
    opened_at = COALESCE(e.opened_at, v.opened_at),
    first_clicked_at = LEAST(e.first_clicked_at, v.first_clicked_at)
  FROM jsonb_to_recordset($1::jsonb) AS v(id text, opened_at timestamptz, first_clicked_at timestamptz)
  WHERE e.id = v.id
), t AS (
  INSERT INTO email_events (id, project_id, email_id, mode, type, recipient, payload, created_at)
  SELECT x.id, x.project_id, x.email_id, x.mode, x.type, x.recipient, x.payload, x.created_at
  FROM jsonb_to_recordset($2::jsonb) AS x(id text, project_id text, email_id text, mode text, type text,
    recipient text, payload jsonb, created_at timestamptz)
  ON CONFLICT (id) DO NOTHING
  RETURNING id
), ${eventGroupsCte(3, 't', 'msg_id')}
SELECT (SELECT coalesce(json_agg(id), '[]'::json) FROM t) AS added, ${OUTBOX_ROWS_JSON} AS outbox`

const trackedEmail = (r: Row): TrackedEmail => {
  const all = [...r.to, ...r.cc, ...r.bcc]
  return {
    summary: {
      id: r.id,
      projectId: r.project_id,
      mode: r.mode,
      from: r.from_address,
      subject: r.subject,
      tags: r.tags ?? {},
    },
    recipient: all.length === 1 ? all[0]! : null,
    openedAt: r.opened_at,
    firstClickedAt: r.first_clicked_at,
  }
}

/**
 * What recording a hit did: `recorded` added its event (rows: the outbox rows to publish after the
 * commit; a group's messages carry the events of several hits, so they all go with the first hit
 * recorded and are published once, the others' rows are empty); `unchanged` added nothing (a
 * repeat open, a hit recorded before, an email that no longer exists).
 */
export type HitOutcome = { outcome: 'recorded'; rows: OutboxRows } | { outcome: 'unchanged' }

const UNCHANGED: HitOutcome = { outcome: 'unchanged' }

/**
 * Opens and clicks from the public tracking links (the TRACKING stream), recorded on the email and
 * its timeline. A hit may come more than once (a redelivery after a crash between the commit and
 * the ack, the gateway's publish tried again past the stream's duplicate window): its event takes
 * the hit's id, so a second insert does nothing and the hit is announced once.
 */
export class TrackingStore {
  /** `pool`: plain pg, as the other hot paths (Prisma costs ~1.5 ms more per statement). */
  constructor(private readonly pool: PgPool) {}

  /**
   * Records a group of hits in one transaction (two statements, whatever its size: one commit
   * instead of one per hit). Answers one outcome per hit, in order; throws, writing nothing, when
   * the transaction fails.
   */
  recordMany(hits: readonly TrackingHit[]): Promise<HitOutcome[]> {
    const emailIds = [...new Set(hits.map((h) => h.emailId))]
    return inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<Row>(LOCK_SQL, [emailIds])
      const plan = planHits(hits, new Map(rows.map((r) => [r.id, trackedEmail(r)])))
      const out: HitOutcome[] = hits.map(() => UNCHANGED)
      if (plan.events.length === 0 && plan.emails.length === 0) return out
      const messages = plan.events.flatMap(({ email, event }) => {
        const m = eventMessage(email, event)
        return m ? [{ email_id: email.id, msg_id: m.msgId, payload: m.payload }] : []
      })
      const {
        rows: [written],
      } = await c.query<{ added: unknown; outbox: unknown }>(WRITE_SQL, [
        JSON.stringify(plan.emails),
        JSON.stringify(plan.events.map(({ email, event }) => timelineRow(email, event))),
        JSON.stringify(messages),
      ])
      const added = new Set(jsonColumn<string[]>(written?.added ?? []))
      let groups: OutboxRows = outboxRowsOf(written?.outbox)
      for (const { index, event } of plan.events) {
        if (!added.has(event.id)) continue
        out[index] = { outcome: 'recorded', rows: groups }
        groups = []
      }
      return out
    })
  }
}
