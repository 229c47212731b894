import { fail, parseBroadcastEmailKey } from '@mailer/contracts'

/** The broadcast and contact a broadcast's email is for. */
export interface BroadcastRef {
  broadcastId: string
  contactId: string
}

/** The key an email is stored under, and for a broadcast's email the broadcast and contact. */
export interface SendKey {
  key: string | null
  broadcast: BroadcastRef | null
}

/**
 * The key a send is stored under. A broadcast's emails (source `broadcast`, which only the
 * broadcast service sends as) keep their keys apart from the API's (`broadcast` set: the unique
 * index's namespace column, and every lookup's), so no key an API user picks, whatever its form,
 * meets a broadcast's email. The broadcast service always names the broadcast and contact in the
 * key (`bc:<broadcastId>:<contactId>`, contract.md part 5); an email of source `broadcast`
 * without one is refused, as it would be stored outside the broadcast's namespace.
 */
export function sendKey(given: string | null, source: string): SendKey {
  if (source !== 'broadcast') return { key: given, broadcast: null }
  const broadcast = parseBroadcastEmailKey(given)
  if (!broadcast)
    throw fail(
      'invalid_body',
      "A broadcast's email needs the key bc:<broadcastId>:<contactId>",
      'idempotencyKey',
    )
  return { key: given, broadcast }
}
