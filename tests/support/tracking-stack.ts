import { projectWithDomain } from './emails.js'
import type { api } from './http.js'
import { type UsedStack, useStack } from './use-stack.js'
import type { Receiver } from './webhooks.js'

/** Links in emails point at PUBLIC_URL; the tracking tests follow them at the gateway's real address. */
export const TRACKING_PUBLIC_URL = 'https://links.mailer.test'

/**
 * Every service the tracking path crosses, with the link settings the tracking tests read the
 * emails by: the dispatcher relays to a test relay (so the links can be read from delivered
 * emails), and a receiver hears the webhook of `trackingProject`.
 */
export const useTrackingStack = (): UsedStack =>
  useStack(['auth', 'email', 'webhook', 'gateway'], {
    env: { PUBLIC_URL: TRACKING_PUBLIC_URL, TRACKING_SECRET: 'tracking-secret-for-tests-0123456789' },
    overrides: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    dispatcher: true,
    receiver: true,
  })

/** A project whose one webhook hears opens and clicks at `receiver`; its secret signs them. */
export async function trackingProject(client: ReturnType<typeof api>, receiver: Receiver) {
  const acme = await projectWithDomain(client, 'acme')
  const hook = await client.post('/v1/webhooks', acme.live, {
    url: receiver.url(),
    events: ['email.opened', 'email.clicked'],
  })
  return { acme, secret: hook.body.secret as string }
}
