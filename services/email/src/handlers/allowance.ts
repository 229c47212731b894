import { SendAllowanceRequest, SUBJECTS } from '@mailer/contracts'
import type { EmailContext } from '../app.js'
import { allowance, broadcastRateLimit } from '../domain/broadcast-share.js'
import { counterWindows } from '../domain/limits.js'
import { readCounters } from '../infra/send-counters.js'

/** `email.allowance`: the broadcast sender sizes each chunk by what the counters admit now. */
export function serveAllowance(ctx: EmailContext): void {
  const { rt } = ctx
  const env = rt.env
  rt.bus.serve(
    SUBJECTS.emailAllowance,
    SendAllowanceRequest,
    async ({ projectId, dailyLimit }) => {
      const w = counterWindows(new Date(), env.RATE_PERIOD)
      const state = await readCounters(rt.db, projectId, w)
      return allowance(state, w.elapsed, {
        rateLimit: env.RATE_LIMIT,
        broadcastRateLimit: broadcastRateLimit(env.RATE_LIMIT, env.BROADCAST_RATE_SHARE),
        dailyLimit,
        periodSeconds: env.RATE_PERIOD,
      })
    },
    { queue: 'email' },
  )
}
