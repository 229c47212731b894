/** A project ready to send: live key, verified domain (DOMAIN_VERIFICATION=skip), no daily limit. */
export interface BenchProject {
  slug: string
  key: string
  from: string
}

async function call(base: string, method: string, path: string, key: string, body?: unknown): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : undefined
}

export async function createProject(base: string, adminKey: string, slug: string): Promise<BenchProject> {
  await call(base, 'POST', '/v1/admin/projects', adminKey, { slug, name: `Bench ${slug}`, dailyLimit: 0 })
  const key = await call(base, 'POST', `/v1/admin/projects/${slug}/api-keys`, adminKey, {
    name: 'bench',
    mode: 'live',
  })
  const domain = `${slug}.bench.test`
  await call(base, 'POST', `/v1/admin/projects/${slug}/domains/${domain}/setup`, adminKey)
  return { slug, key: key.key, from: `Bench <bench@${domain}>` }
}

export async function addWebhook(base: string, p: BenchProject, url: string): Promise<void> {
  await call(base, 'POST', '/v1/webhooks', p.key, { url, events: ['*'] })
}

/** A small, typical transactional email. */
export const sendInput = (p: BenchProject, to = 'reader@example.com') => ({
  from: p.from,
  to,
  subject: 'Your sign-in code',
  html: '<p>Your code is <b>123456</b>. It expires in 10 minutes.</p>',
  text: 'Your code is 123456. It expires in 10 minutes.',
  tags: { kind: 'otp' },
})
