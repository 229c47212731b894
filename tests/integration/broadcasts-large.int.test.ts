import { waitFor } from '@mailer/testing'
import { expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'
import { metricValue } from '../support/webhooks.js'

// A broadcast whose personalized emails are large. The sender renders a chunk contact by contact
// and hands it over in batch requests that each fit one NATS message, so it holds one group of
// emails at a time instead of the whole rendered chunk (a 3 MB newsletter for 100 contacts was
// about 1 GB of heap and killed the pod, which claimed the same broadcast again when it came back).
// A contact whose email renders over MAX_MESSAGE_BYTES is skipped as render_failed before anything
// of it is held, as the email service would refuse it anyway. MAX_MESSAGE_BYTES is 500 KB here,
// for both services, and NATS's max_payload 1 MB.
const MAX_MESSAGE_BYTES = 500_000
const { stack, client } = useStack(['auth', 'email', 'broadcast', 'gateway'], {
  env: {
    BROADCAST_POLL_MS: '50',
    MAX_MESSAGE_BYTES: String(MAX_MESSAGE_BYTES),
  },
})

const broadcastMetric = (outcome: string) =>
  metricValue(stack.metricsPort('broadcast'), 'mailer_broadcast_emails_total', `outcome="${outcome}"`)

/** Batch requests the email service has answered (the send check's dry run included). */
async function batchRequests(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort('email')}/metrics`)).text()
  return text
    .split('\n')
    .filter((l) => /^mailer_email_nats_handled_seconds_count\{[^}]*emails\.send-batch/.test(l))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0)
}

it('sends large personalized emails in several batch requests and skips a contact whose email is too large', async () => {
  const p = await projectWithDomain(client, 'large', 'news.large.test')
  const audienceId = (await client.post('/v1/audiences', p.live, { name: 'Readers' })).body.id
  // Twelve readers get ~200 KB each (html and the text derived from it): over 2 MB for the chunk.
  // One asked for the supplement too, ~800 KB: over MAX_MESSAGE_BYTES.
  const readers = Array.from({ length: 13 }, (_, i) => ({
    email: `reader${String(i).padStart(2, '0')}@example.com`,
    firstName: `R${i}`,
    data: { supplement: i === 6 },
  }))
  const imported = await client.post(`/v1/contacts/import?audienceId=${audienceId}`, p.live, readers)
  expect(imported.body).toEqual({ created: 13, updated: 0 })
  const html = `<p>Hello {{first_name}}</p>{{#if supplement}}<p>${'s'.repeat(300_000)}</p>{{/if}}<p>${'newsletter '.repeat(9_000)}</p>`
  const b = await client.post('/v1/broadcasts', p.live, {
    audienceId,
    from: p.from,
    subject: 'Issue for {{first_name}}',
    html,
  })
  expect(b.status).toBe(201)

  const requestsBefore = await batchRequests()
  expect((await client.post(`/v1/broadcasts/${b.body.id}/send`, p.live)).status).toBe(202)
  const sent = await waitFor(
    async () => {
      const r = await client.get(`/v1/broadcasts/${b.body.id}`, p.live)
      return r.body.status === 'sent' ? r.body : null
    },
    { timeoutMs: 30_000, what: 'the broadcast sent' },
  )
  expect(sent.counts).toEqual({ queued: 12 })
  const emails = await client.get(`/v1/emails?tag=broadcast_id:${b.body.id}`, p.live)
  expect(emails.body.data.map((e: any) => e.to[0]).sort()).toEqual(
    readers.filter((_, i) => i !== 6).map((r) => r.email),
  )
  // The one too large was skipped as a render failure, not handed over to be refused.
  expect(await broadcastMetric('render_failed')).toBe(1)
  expect(await broadcastMetric('rejected')).toBe(0)
  // 2.4 MB of emails do not fit one 1 MB message: the dry run, then at least three batches.
  expect((await batchRequests()) - requestsBefore).toBeGreaterThanOrEqual(4)
}, 60_000)
