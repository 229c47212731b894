import type { EventPayload, TrackingHit } from '@mailer/contracts'
import { buildEvent, type EmailSummary } from '@mailer/email-core'

/** An email that hits name, as the write found it (its row locked until the commit). */
export interface TrackedEmail {
  summary: EmailSummary
  /**
   * One message goes to every recipient, so a pixel or link hit cannot tell them apart: the
   * event names the recipient only when there is just one.
   */
  recipient: string | null
  openedAt: Date | null
  firstClickedAt: Date | null
}

/** What a group of hits writes: the emails' columns, and the events that may be new. */
export interface HitPlan {
  /** One per email whose opened_at or first_clicked_at changes (ISO times, null: unchanged). */
  emails: Array<{ id: string; opened_at: string | null; first_clicked_at: string | null }>
  /** The events to add, each with the index of the hit it records; one whose id exists adds nothing. */
  events: Array<{ index: number; email: EmailSummary; event: EventPayload }>
}

const time = (hit: TrackingHit): number => new Date(hit.at).getTime()
/** Earlier hit first; the same instant goes by id (ids are made in order). */
const before = (a: TrackingHit, b: TrackingHit): boolean =>
  time(a) < time(b) || (time(a) === time(b) && a.id < b.id)

/**
 * Decides what hits record, as recording them one at a time would, in one pass:
 * - a hit whose email no longer exists records nothing;
 * - a hit given twice (a redelivery, a publish repeated past the stream's duplicate window) is one
 *   hit: its event takes the hit's id, so it is added once, whether the copies come in one group or
 *   not;
 * - the first open only: an email not yet opened takes its earliest open of the group (its time is
 *   opened_at, its id the one `email.opened`), every other open records nothing;
 * - every click adds `email.clicked`, and the earliest click ever sets first_clicked_at (hits held
 *   back by an outage may come out of order).
 */
export function planHits(hits: readonly TrackingHit[], emails: ReadonlyMap<string, TrackedEmail>): HitPlan {
  const seen = new Set<string>()
  const firstOpen = new Map<string, { index: number; hit: TrackingHit }>()
  const firstClick = new Map<string, TrackingHit>()
  const events: HitPlan['events'] = []
  const add = (index: number, hit: TrackingHit, email: TrackedEmail) => {
    const extra =
      hit.kind === 'open' ? { userAgent: hit.userAgent } : { url: hit.url, userAgent: hit.userAgent }
    const type = hit.kind === 'open' ? 'email.opened' : 'email.clicked'
    const built = buildEvent(email.summary, { type, recipient: email.recipient, at: new Date(hit.at), extra })
    // As every event is built, but with the hit's id: the same hit twice is one event.
    events.push({ index, email: email.summary, event: { ...built, id: hit.id } })
  }

  for (const [index, hit] of hits.entries()) {
    if (seen.has(hit.id)) continue
    seen.add(hit.id)
    const email = emails.get(hit.emailId)
    if (!email) continue
    if (hit.kind === 'click') {
      const first = firstClick.get(hit.emailId)
      if (!first || before(hit, first)) firstClick.set(hit.emailId, hit)
      add(index, hit, email)
    } else if (email.openedAt === null) {
      const first = firstOpen.get(hit.emailId)
      if (!first || before(hit, first.hit)) firstOpen.set(hit.emailId, { index, hit })
    }
  }
  for (const { index, hit } of firstOpen.values()) add(index, hit, emails.get(hit.emailId)!)
  events.sort((a, b) => a.index - b.index)

  const changed = new Map<string, HitPlan['emails'][number]>()
  const row = (id: string) =>
    changed.get(id) ?? changed.set(id, { id, opened_at: null, first_clicked_at: null }).get(id)!
  for (const [id, { hit }] of firstOpen) row(id).opened_at = new Date(hit.at).toISOString()
  for (const [id, hit] of firstClick) {
    const current = emails.get(id)!.firstClickedAt
    if (current === null || time(hit) < current.getTime())
      row(id).first_clicked_at = new Date(hit.at).toISOString()
  }
  return { emails: [...changed.values()], events }
}
