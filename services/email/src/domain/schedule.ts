import { fail, isoWithOffset, MAX_SCHEDULE_DAYS } from '@mailer/contracts'

const DAY_MS = 86_400_000

/**
 * `scheduledAt`: an ISO 8601 date-time with an offset, in the future and at most 30 days ahead;
 * anything else is `invalid_schedule`. Returns null when absent.
 */
export function checkSchedule(raw: unknown, now: Date): Date | null {
  if (raw === undefined || raw === null) return null
  if (typeof raw !== 'string' || !isoWithOffset.safeParse(raw).success) {
    throw fail(
      'invalid_schedule',
      'scheduledAt must be an ISO 8601 date-time with a time zone offset',
      'scheduledAt',
    )
  }
  const at = new Date(raw)
  if (Number.isNaN(at.getTime()))
    throw fail('invalid_schedule', 'scheduledAt is not a valid date', 'scheduledAt')
  if (at.getTime() <= now.getTime())
    throw fail('invalid_schedule', 'scheduledAt must be in the future', 'scheduledAt')
  if (at.getTime() > now.getTime() + MAX_SCHEDULE_DAYS * DAY_MS) {
    throw fail(
      'invalid_schedule',
      `scheduledAt can be at most ${MAX_SCHEDULE_DAYS} days ahead`,
      'scheduledAt',
    )
  }
  return at
}
