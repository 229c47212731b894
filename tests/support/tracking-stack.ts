import type { TestEnv } from '@mailer/testing'
import { projectWithDomain } from './emails.js'
import { api } from './http.js'
import { TestRelay } from './smtp-relay.js'
import { Stack } from './stack.js'
import { Receiver } from './webhooks.js'

/** Links in emails point at PUBLIC_URL; the tracking tests follow them at the gateway's real address. */
export const TRACKING_PUBLIC_URL = 'https://links.mailer.test'

/** The services of the tracking tests, with the link settings those tests read the emails by. */
export const trackingStack = (te: TestEnv): Stack =>
  new Stack(te, { PUBLIC_URL: TRACKING_PUBLIC_URL, TRACKING_SECRET: 'tracking-secret-for-tests-0123456789' })

/**
 * Starts every service the tracking path crosses (the dispatcher relaying to a test relay, so the
 * links can be read from delivered emails) and a project whose one webhook hears opens and clicks.
 */
export async function startTrackingStack(stack: Stack) {
  const relay = await TestRelay.start()
  const receiver = await Receiver.start()
  await stack.startAll(['auth', 'email', 'webhook', 'gateway'], { WEBHOOK_ALLOW_PRIVATE: 'true' })
  await stack.start('dispatcher', { MAIL_TRANSPORT: 'smtp', SMTP_URL: relay.url, SMTP_TIMEOUT_SECONDS: '5' })
  const client = api(stack.gatewayUrl)
  const acme = await projectWithDomain(client, 'acme')
  const hook = await client.post('/v1/webhooks', acme.live, {
    url: receiver.url(),
    events: ['email.opened', 'email.clicked'],
  })
  return { relay, receiver, client, acme, secret: hook.body.secret as string }
}
