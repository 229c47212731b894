import { useTestEnv, waitFor } from '@mailer/testing'
import { simpleParser } from 'mailparser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { api } from '../support/http.js'
import { TestRelay } from '../support/smtp-relay.js'
import { Stack } from '../support/stack.js'

// What a project can put in the message that reaches the relay: nothing of the send input may add
// a mailbox to From, replace a field the service owns, or smuggle control characters into a header.
// Checked on the raw bytes a real SMTP server received, not on the API's answer alone.
const te = useTestEnv()
const stack = new Stack(te)
let relay: TestRelay
let client: ReturnType<typeof api>
let live: string
let domain: string

beforeAll(async () => {
  relay = await TestRelay.start()
  await stack.startAll(['auth', 'email', 'gateway'])
  await stack.start('dispatcher', { MAIL_TRANSPORT: 'smtp', SMTP_URL: relay.url, SMTP_TIMEOUT_SECONDS: '5' })
  client = api(stack.gatewayUrl)
  const p = await projectWithDomain(client, 'smtp-inject', 'mail.inject.test')
  live = p.live
  domain = p.domain
})
afterAll(async () => {
  await stack.stopAll()
  await relay.stop()
})

/** Sends (202 expected) and answers the raw message the relay received. */
async function delivered(input: Record<string, unknown>): Promise<string> {
  const sent = await client.post('/v1/emails', live, input)
  expect(sent.status, JSON.stringify(sent.body)).toBe(202)
  const id = sent.body.id as string
  const got = await waitFor(() => relay.delivered.find((d) => d.emailId === id) ?? null, {
    timeoutMs: 20_000,
    what: `${id} at the relay`,
  })
  return got.raw.toString('latin1')
}

const headerBlock = (raw: string) => raw.slice(0, raw.indexOf('\r\n\r\n'))

describe('From and Reply-To display names', () => {
  it('a display name with "," or ";" stays one mailbox on the project’s domain: no foreign address reaches From', async () => {
    for (const name of ['ceo@bank.test, Bob', 'Bob; ceo@bank.test;', 'a:ceo@bank.test;']) {
      const from = `${name} <billing@${domain}>`
      const raw = await delivered(email(from, { replyTo: `${name} <help@${domain}>` }))
      const parsed = await simpleParser(raw)
      expect(parsed.from?.value.map((m) => m.address)).toEqual([`billing@${domain}`])
      expect(parsed.from?.value[0]?.name).toBe(name)
      expect(parsed.replyTo?.value.map((m) => m.address)).toEqual([`help@${domain}`])
      // The name travels quoted, as one display name.
      expect(headerBlock(raw)).toContain(`From: "${name}" <billing@${domain}>`)
    }
  })
})
