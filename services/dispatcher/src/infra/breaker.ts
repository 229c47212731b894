import type { Logger, Metrics } from '@mailer/observability'
import CircuitBreaker from 'opossum'
import { classify, replyText } from '../domain/smtp-reply.js'
import { SendAborted, SmtpConnectionError } from './smtp/options.js'

export interface BreakerOptions {
  resetSeconds: number
  minCalls: number
}

/**
 * A circuit breaker around the relay. Only failures that say the relay is unreachable or unwell
 * (refused or dropped connections, time-outs, greeting/TLS/AUTH errors, a 421) count: the SMTP
 * pool rejects with those alone, and a relay that answers "no" to a message or recipient is
 * healthy. So is one closing the session with its sending quota (`421 4.7.0 Daily sending quota
 * exceeded`, the platform-limit rule of smtp-reply.ts): it is up and answering, and its email goes
 * back to `queued` for PLATFORM_LIMIT_RETRY_SECONDS. Counted, such answers would open the breaker,
 * and the emails after them would be deferred without a code on the short backoff and fail after
 * about an hour instead of waiting for the quota.
 *
 * At more than 50 % failures over the last 10 s (opossum's threshold is strict; and at least
 * `minCalls` calls) it opens: sends fail at once, without touching the relay, and their emails
 * are deferred. After `resetSeconds` one probe goes through (half-open); its success (a quota
 * answer included) closes the breaker.
 *
 * No opossum time-out: it would only stop waiting, not stop the send, and a send that finishes
 * after we recorded "deferred" would be delivered twice. The SMTP session's own time-out ends the
 * connection instead.
 */
export function relayBreaker<A extends unknown[], R>(
  send: (...args: A) => Promise<R>,
  opts: BreakerOptions,
  metrics: Metrics,
  logger: Logger,
): CircuitBreaker<A, R> {
  const breaker = new CircuitBreaker(send, {
    timeout: false,
    errorThresholdPercentage: 50,
    volumeThreshold: opts.minCalls,
    resetTimeout: Math.round(opts.resetSeconds * 1000),
    rollingCountTimeout: 10_000,
    rollingCountBuckets: 10,
    errorFilter: notRelayFailure,
  })
  const open = metrics.gauge(
    'relay_breaker_open',
    '1 while the circuit breaker around the relay is open or half-open, else 0',
  )
  open.set(0)
  breaker.on('open', () => {
    open.set(1)
    logger.warn(
      { resetSeconds: opts.resetSeconds },
      'relay circuit breaker opened: deferring emails without trying the relay',
    )
  })
  breaker.on('halfOpen', () => {
    logger.info('relay circuit breaker half-open: probing the relay')
  })
  breaker.on('close', () => {
    open.set(0)
    logger.info('relay circuit breaker closed: relay reachable again')
  })
  return breaker
}

/**
 * Given up by a stopping dispatcher, not refused by the relay; or the relay's quota answer, which
 * relay.ts gives every recipient as this same (connection-stage) reply: the platform limit.
 */
function notRelayFailure(err: unknown): boolean {
  if (err instanceof SendAborted) return true
  if (!(err instanceof SmtpConnectionError)) return false
  return classify({ stage: 'connection', code: err.code, text: replyText(err.message) }) === 'platform_limit'
}

/** The breaker refused the call without trying the relay. */
export const breakerOpen = (err: unknown): boolean => (err as { code?: string })?.code === 'EOPENBREAKER'
