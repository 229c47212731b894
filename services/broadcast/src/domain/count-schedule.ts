/**
 * When a broadcast's stored email counts are recounted next. Its emails change status fastest
 * while it sends and in the hour after (deliveries, deferrals, retries); bounces and complaints
 * still arrive days later, ever more rarely. So: every `refreshMs` while it is sending or paused
 * and for `recentMs` after it finished (sent or canceled), then at a tenth of its age since, at
 * most every `maxMs`. A recount costs about one index entry per email of the broadcast, so a year
 * of daily newsletters costs a few recounts a day each instead of one every few seconds.
 */
export interface CountSchedule {
  refreshMs: number
  recentMs: number
  maxMs: number
}

/** What the schedule reads of a broadcast (null: the broadcast is gone). */
export interface CountedBroadcast {
  status: string | null
  scheduledAt: Date | null
  /** When it was sent (completedAt) or canceled; null while it is not finished. */
  finishedAt: Date | null
}

/** The share of a finished broadcast's age after which it is recounted, once it is no longer recent. */
export const AGE_SHARE = 0.1

export function nextCountInMs(b: CountedBroadcast, now: Date, s: CountSchedule): number {
  const clamp = (ms: number) => Math.min(Math.max(ms, s.refreshMs), Math.max(s.maxMs, s.refreshMs))
  switch (b.status) {
    case 'sending':
    case 'paused':
      return s.refreshMs
    case 'scheduled':
      // No email before it starts; the sender's claim at `scheduledAt` is when counting matters.
      return clamp(b.scheduledAt ? b.scheduledAt.getTime() - now.getTime() : 0)
    case 'sent':
    case 'canceled': {
      const age = b.finishedAt ? now.getTime() - b.finishedAt.getTime() : 0
      return age < s.recentMs ? s.refreshMs : clamp(age * AGE_SHARE)
    }
    default:
      // A draft (never counted) or a broadcast gone: nothing will change.
      return clamp(s.maxMs)
  }
}
