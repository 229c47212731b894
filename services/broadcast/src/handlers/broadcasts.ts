import { serveRoutes } from '@mailer/bus'
import {
  BroadcastsQuery,
  CreateBroadcastBody,
  encodeCursor,
  MailerError,
  parseBody,
  parseOptionalBody,
  parseQuery,
  requireProject,
  SendBroadcastBody,
  UpdateBroadcastBody,
} from '@mailer/contracts'
import type { Db } from '@mailer/db'
import { checkTemplateSyntax } from '@mailer/templating'
import type { BroadcastContext } from '../app.js'
import { notDraft, planSend } from '../domain/broadcast-state.js'
import {
  type BroadcastRow,
  type BroadcastSummaryRow,
  toBroadcastRecord,
  toBroadcastSummary,
} from '../domain/records.js'
import {
  cancelBroadcast,
  createBroadcast,
  deleteDraft,
  findBroadcast,
  listBroadcasts,
  markSent,
  updateDraft,
} from '../infra/broadcast-store.js'
import { storedCounts } from '../infra/count-store.js'
import { checkSendable } from '../infra/send-check.js'

/** Sends of a draft that a PATCH changed under them, checked again before giving up. */
const MARK_SENT_TRIES = 5

/**
 * Records with their email counts as last recounted (count-store.ts), one stored row each, never
 * counted from the emails here: a page of large broadcasts would be tens of millions of emails to
 * count at every read (a draft has no emails, so it costs no query).
 */
async function withCounts<R extends BroadcastSummaryRow, T>(
  db: Db,
  rows: R[],
  toRecord: (row: R, counts: Record<string, number>) => T,
): Promise<T[]> {
  const counts = await storedCounts(
    db,
    rows.filter((r) => r.status !== 'draft').map((r) => r.id),
  )
  return rows.map((r) => toRecord(r, counts.get(r.id) ?? {}))
}

const one = async (db: Db, row: BroadcastRow) => (await withCounts(db, [row], toBroadcastRecord))[0]!

/** Broadcasts (contract.md part 5): drafts, send or schedule, cancel; the sender loop does the rest. */
export function serveBroadcasts(ctx: BroadcastContext): void {
  const db = ctx.rt.db
  serveRoutes(ctx.rt.bus, 'broadcast', {
    'api.broadcast.broadcasts.create': async ({ caller, body }) => {
      const input = parseBody(CreateBroadcastBody, body)
      checkTemplateSyntax(input)
      return one(db, await createBroadcast(db, requireProject(caller).id, input))
    },

    'api.broadcast.broadcasts.list': async ({ caller, query }) => {
      const q = parseQuery(BroadcastsQuery, query)
      const rows = await listBroadcasts(db, requireProject(caller).id, q)
      const more = rows.length > q.limit
      // Without html and text (docs/api.md): a page of full broadcasts could outgrow a NATS message.
      const data = await withCounts(db, rows.slice(0, q.limit), toBroadcastSummary)
      const last = data[data.length - 1]
      return {
        data,
        nextCursor: more && last ? encodeCursor({ createdAt: new Date(last.createdAt), id: last.id }) : null,
      }
    },

    'api.broadcast.broadcasts.get': async ({ caller, params }) =>
      one(db, await findBroadcast(db, requireProject(caller).id, params.id ?? '')),

    'api.broadcast.broadcasts.update': async ({ caller, params, body }) => {
      const patch = parseBody(UpdateBroadcastBody, body)
      checkTemplateSyntax(patch)
      return one(db, await updateDraft(db, requireProject(caller).id, params.id ?? '', patch))
    },

    'api.broadcast.broadcasts.delete': async ({ caller, params }) => {
      const id = params.id ?? ''
      await deleteDraft(db, requireProject(caller).id, id)
      return { id, deleted: true as const }
    },

    'api.broadcast.broadcasts.send': async ({ caller, params, body }) => {
      const project = requireProject(caller)
      const { scheduledAt } = parseOptionalBody(SendBroadcastBody, body)
      let row: BroadcastRow | null = null
      // The draft is marked sent only as it was checked; one changed meanwhile is checked again.
      for (let tries = 0; row === null; tries++) {
        if (tries === MARK_SENT_TRIES)
          throw new MailerError(
            'service_unavailable',
            'The broadcast kept changing while it was being sent; retry',
          )
        const current = await findBroadcast(db, project.id, params.id ?? '')
        if (current.status !== 'draft') throw notDraft(current.status)
        const plan = planSend(scheduledAt, new Date())
        await checkSendable(
          { db, client: ctx.client, links: ctx.links, maxMessageBytes: ctx.rt.env.MAX_MESSAGE_BYTES },
          caller,
          current,
        )
        row = await markSent(db, caller, current, plan)
      }
      ctx.rt.logger.info(
        { requestId: caller.requestId, broadcastId: row.id, status: row.status },
        'broadcast send requested',
      )
      return one(db, row)
    },

    'api.broadcast.broadcasts.cancel': async ({ caller, params }) =>
      one(db, await cancelBroadcast(db, requireProject(caller).id, params.id ?? '')),
  })
}
