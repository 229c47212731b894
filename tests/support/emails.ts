import type { api } from './http.js'
import { createProject } from './http.js'

type Client = ReturnType<typeof api>

/** A project with live and test keys and a verified sending domain (admin setup route). */
export async function projectWithDomain(
  client: Client,
  slug: string,
  domain = `${slug}.test`,
  extra: Record<string, unknown> = {},
) {
  const p = await createProject(client, slug, extra)
  const d = await client.post(`/v1/admin/projects/${slug}/domains/${domain}/setup`, client.admin)
  if (d.status !== 200 || d.body.verification !== 'verified')
    throw new Error(`domain setup: ${d.status} ${JSON.stringify(d.body)}`)
  return { ...p, domain, from: `Sender <hello@${domain}>` }
}

/** A valid send input from `from`, with `over` merged on top. */
export const email = (from: string, over: Record<string, unknown> = {}) => ({
  from,
  to: 'alice@example.com',
  subject: 'Hello',
  html: '<p>Hello <b>there</b></p>',
  ...over,
})

export const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString()

/**
 * A DNS resolver (mailauth's `resolver` option) that answers the project's DKIM record as the
 * API shows it for publishing, and nothing else: a DKIM check against what the user would publish.
 */
export async function publishedDkimResolver(
  client: Client,
  key: string,
): Promise<(name: string, type: string) => Promise<string[][]>> {
  const domains = await client.get('/v1/domains', key)
  const dkim = domains.body.data[0].records.find((r: any) => r.name.includes('._domainkey.'))
  return async (name, type) => {
    if (type === 'TXT' && name === dkim.name) return [[dkim.value]]
    throw Object.assign(new Error(`no ${type} ${name}`), { code: 'ENOTFOUND' })
  }
}
