import { type BroadcastStatus, fail, isoWithOffset, MAX_SCHEDULE_DAYS } from '@mailer/contracts'

/** Broadcasts the sender still works on; they hold on to their audience (409 audience_in_use). */
export const OPEN_STATUSES = ['draft', 'scheduled', 'sending', 'paused'] as const
/** Broadcasts `cancel` may stop. */
export const CANCELABLE_STATUSES = ['scheduled', 'sending', 'paused'] as const

export const isCancelable = (s: string): boolean => (CANCELABLE_STATUSES as readonly string[]).includes(s)

export const notDraft = (status: string) =>
  fail('broadcast_not_draft', `Only a draft can be changed, sent or deleted; this broadcast is ${status}`)

export const notCancelable = (status: string) =>
  fail(
    'not_cancelable',
    `Only a scheduled, sending or paused broadcast can be canceled; this one is ${status}`,
  )

/** Where `send` puts a draft: due now (`sending`), or `scheduled` until `scheduledAt`. */
export interface SendPlan {
  status: Extract<BroadcastStatus, 'sending' | 'scheduled'>
  scheduledAt: Date | null
  /** When the sender takes it up. */
  resumeAt: Date
}

/**
 * `scheduledAt` as emails take it (contract.md part 3): ISO 8601 with an offset, in the future,
 * at most 30 days ahead, else 400 `invalid_schedule`. Without one the broadcast is due now.
 */
export function planSend(scheduledAt: unknown, now: Date): SendPlan {
  if (scheduledAt === undefined || scheduledAt === null)
    return { status: 'sending', scheduledAt: null, resumeAt: now }
  const parsed = isoWithOffset.safeParse(scheduledAt)
  if (!parsed.success) {
    throw fail(
      'invalid_schedule',
      'scheduledAt must be an ISO 8601 date-time with a time zone offset',
      'scheduledAt',
    )
  }
  const at = new Date(parsed.data)
  if (at.getTime() <= now.getTime()) {
    throw fail('invalid_schedule', 'scheduledAt must be in the future', 'scheduledAt')
  }
  if (at.getTime() > now.getTime() + MAX_SCHEDULE_DAYS * 86_400_000) {
    throw fail(
      'invalid_schedule',
      `scheduledAt must be at most ${MAX_SCHEDULE_DAYS} days ahead`,
      'scheduledAt',
    )
  }
  return { status: 'scheduled', scheduledAt: at, resumeAt: at }
}
