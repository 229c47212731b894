import { expect } from 'vitest'
import { projectWithDomain } from './emails.js'
import type { api } from './http.js'

type Client = ReturnType<typeof api>

/**
 * The project `acme` (sending domain news.acme.test) and its audience `Everyone`: Ann and Bob,
 * and Cat, who unsubscribed (a broadcast to it makes two emails).
 */
export async function acmeWithAudience(client: Client) {
  const acme = await projectWithDomain(client, 'acme', 'news.acme.test')
  const audienceId: string = (await client.post('/v1/audiences', acme.live, { name: 'Everyone' })).body.id
  await client.post(`/v1/contacts/import?audienceId=${audienceId}`, acme.live, [
    { email: 'ann@example.com', firstName: 'Ann' },
    { email: 'bob@example.com', firstName: 'Bob' },
    { email: 'cat@example.com', firstName: 'Cat', unsubscribed: true },
  ])
  return { acme, audienceId }
}

/** A broadcast to `audienceId` from `p`'s sending address, sent now (202): its id. */
export async function sendBroadcast(
  client: Client,
  p: { live: string; from: string },
  audienceId: string,
): Promise<string> {
  const b = await client.post('/v1/broadcasts', p.live, {
    audienceId,
    from: p.from,
    subject: 'Hi {{first_name}}',
    html: '<p>x</p>',
  })
  expect((await client.post(`/v1/broadcasts/${b.body.id}/send`, p.live)).status).toBe(202)
  return b.body.id
}
