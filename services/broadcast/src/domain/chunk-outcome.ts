/** What became of one contact of a chunk (the `outcome` label of mailer_broadcast_emails_total). */
export type ContactOutcome =
  | 'accepted'
  | 'duplicate'
  | 'suppressed'
  | 'unsubscribed'
  | 'render_failed'
  | 'rejected'
  | 'limited'
  | 'sender_refused'

/** Refusals that hold for every contact until something changes: the broadcast pauses on them. */
export type PauseCode = 'rate_limited' | 'daily_limit_exceeded' | 'domain_not_verified' | 'invalid_sender'

/** One contact of a chunk, in walk order: skipped before sending, or the index of its batch item. */
export type ChunkEntry =
  | { contactId: string; skipped: 'unsubscribed' | 'render_failed' }
  | { contactId: string; item: number }

/** A batch item's answer as the email service gives it. */
export type ItemResult =
  | { id: string | null; status: string; idempotent?: boolean }
  | { error: { code: string; message?: string; param?: string } }

export interface ChunkSettlement {
  /** The last contact done with; the next chunk starts after it. */
  cursor: string | null
  /** Set when an item was refused for the whole broadcast: it pauses and retries from that contact. */
  pause: PauseCode | null
  tally: Partial<Record<ContactOutcome, number>>
}

const LIMITS: readonly string[] = ['rate_limited', 'daily_limit_exceeded']
// Every email of a broadcast has the same `from`: a sender the email service refuses (its domain
// no longer verified, or no longer the project's) would be refused for every contact left, so
// skipping them would end the broadcast `sent` having mailed no one more.
const SENDER_REFUSALS: readonly string[] = ['domain_not_verified', 'invalid_sender']

/** An answer that pauses the broadcast (a limit, a refused sender): the rest of its chunk can wait. */
export function pausesBroadcast(r: ItemResult): boolean {
  return 'error' in r && (LIMITS.includes(r.error.code) || SENDER_REFUSALS.includes(r.error.code))
}

function classify(r: ItemResult): ContactOutcome {
  if (!('error' in r)) return r.idempotent ? 'duplicate' : 'accepted'
  switch (r.error.code) {
    case 'recipient_suppressed':
      return 'suppressed'
    // The key was used before with other content (the contact changed since a crash): it was sent.
    case 'idempotency_payload_mismatch':
      return 'duplicate'
    default:
      if (LIMITS.includes(r.error.code)) return 'limited'
      return SENDER_REFUSALS.includes(r.error.code) ? 'sender_refused' : 'rejected'
  }
}

/**
 * Settles a chunk against the batch answer. Limits admit a prefix of the items, and a refused
 * sender refuses them all, so the cursor moves to the contact just before the first such item and
 * everything from there is tried again on resume (items past it that were accepted anyway are
 * idempotent repeats then).
 */
export function settleChunk(
  prevCursor: string | null,
  entries: readonly ChunkEntry[],
  results: readonly ItemResult[],
): ChunkSettlement {
  const tally: Partial<Record<ContactOutcome, number>> = {}
  const count = (o: ContactOutcome) => {
    tally[o] = (tally[o] ?? 0) + 1
  }
  let cursor = prevCursor
  let pause: PauseCode | null = null
  for (const e of entries) {
    const result: ItemResult | null =
      'item' in e ? (results[e.item] ?? { error: { code: 'missing_result' } }) : null
    const outcome = result ? classify(result) : (e as { skipped: ContactOutcome }).skipped
    if (outcome === 'limited' || outcome === 'sender_refused') {
      pause ??= (result as { error: { code: PauseCode } }).error.code
      count(outcome)
      continue
    }
    if (pause) continue
    count(outcome)
    cursor = e.contactId
  }
  return { cursor, pause, tally }
}
