import type { EMAIL_STATUS_VALUES } from '@mailer/contracts'

/**
 * Statuses an email may still leave on its own (waiting, being sent, retrying): never deleted by
 * EMAIL_RETENTION_DAYS, however old. Every other status is settled; a late bounce or complaint
 * for an email already deleted finds nothing to record.
 */
export const UNSETTLED_STATUSES = [
  'queued',
  'scheduled',
  'sending',
  'deferred',
] as const satisfies ReadonlyArray<(typeof EMAIL_STATUS_VALUES)[number]>
