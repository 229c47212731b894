import { type Runtime, startRuntime } from '@mailer/bus'
import { AuthInvalidation, SUBJECTS } from '@mailer/contracts'
import type { AuthEnv } from './env.js'
import { serveApiKeys } from './handlers/api-keys.js'
import { makeInvalidate } from './handlers/invalidate.js'
import { serveProjects } from './handlers/projects.js'
import { serveVerify } from './handlers/verify.js'
import { KeyStore } from './infra/key-store.js'
import { LastUsedTracker } from './infra/last-used.js'

export const SERVICE = 'auth'

/** Starts the auth service: projects, API keys, and key verification for the gateway. */
export async function start(env: AuthEnv): Promise<Runtime<AuthEnv>> {
  const rt = await startRuntime(SERVICE, env)
  const store = new KeyStore(rt.db, env.AUTH_CACHE_TTL_SECONDS * 1000)
  const lastUsed = new LastUsedTracker(rt.db, rt.logger)
  lastUsed.start()
  rt.onStop(() => lastUsed.stop())

  rt.bus.subscribeInvalidations(SUBJECTS.authInvalidate, {
    onMessage: (payload) => store.apply(AuthInvalidation.parse(payload)),
    onMissed: () => store.clear(),
  })
  const invalidate = makeInvalidate(rt.bus, store)
  serveVerify(rt.bus, store, lastUsed, SERVICE)
  serveProjects(rt.bus, rt.db, invalidate, SERVICE)
  serveApiKeys(rt.bus, rt.db, invalidate, SERVICE)
  // Subscriptions must reach the server before we report ready.
  await rt.bus.flush()
  rt.started()
  return rt
}
