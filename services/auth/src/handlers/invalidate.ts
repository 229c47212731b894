import type { Bus } from '@mailer/bus'
import { type AuthInvalidation, SUBJECTS } from '@mailer/contracts'
import type { KeyStore } from '../infra/key-store.js'

export type Invalidate = (inv: Partial<AuthInvalidation>) => Promise<void>

/**
 * Applies an invalidation here at once and broadcasts it to every other replica, flushing before
 * the change is acknowledged: the next request, published after our reply, reaches any replica
 * after the invalidation does (one NATS connection delivers in order).
 */
export function makeInvalidate(bus: Bus, store: KeyStore): Invalidate {
  return async (partial) => {
    const inv: AuthInvalidation = {
      keyHashes: partial.keyHashes ?? [],
      projectIds: partial.projectIds ?? [],
      slugs: partial.slugs ?? [],
    }
    store.apply(inv)
    bus.publish(SUBJECTS.authInvalidate, inv)
    await bus.flush()
  }
}
