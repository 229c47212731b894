import { AdminClient, MailerClient } from '@mailer/client'
import { beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// iterate() against the real gateway: a caller's signal stops a walk over pages, between pages
// and during a page request. Each page request goes through a fetch that records it.
const { stack } = useStack(['auth', 'email', 'gateway'])
let client: MailerClient
const requests: { url: string; signal: AbortSignal | null | undefined; outcome: Promise<string> }[] = []
/** Runs when a page request has just been sent (before any answer can arrive). */
let onRequest: (n: number) => void = () => undefined

const recordingFetch: typeof fetch = (input, init) => {
  const answer = fetch(input, init)
  const outcome = answer.then(
    () => 'answered',
    (err: unknown) => `failed: ${(err as Error).name}`,
  )
  requests.push({ url: String(input), signal: init?.signal, outcome })
  onRequest(requests.length)
  return answer
}

beforeAll(async () => {
  const admin = new AdminClient({ adminKey: ADMIN_KEY, baseUrl: stack.gatewayUrl })
  await admin.projects.create({ slug: 'pages', name: 'Pages' })
  await admin.project('pages').domains.setup('pages.test')
  const key = (await admin.apiKeys.create('pages', { name: 'test', mode: 'test' })).key
  client = new MailerClient({ apiKey: key, baseUrl: stack.gatewayUrl, fetch: recordingFetch })
  for (const to of ['a@example.com', 'b@example.com', 'c@example.com'])
    await client.emails.send({ from: 'hello@pages.test', to, subject: 'Page', text: 'x' })
})

/** Walks `emails.iterate` one email per page; what it yielded, and what it threw. */
async function walk(signal: AbortSignal, onItem: () => void = () => undefined) {
  requests.length = 0
  const ids: string[] = []
  try {
    for await (const e of client.emails.iterate({ limit: 1 }, { signal })) {
      ids.push(e.id)
      onItem()
    }
  } catch (err) {
    return { ids, err }
  }
  return { ids, err: undefined }
}

describe('emails.iterate(query, { signal })', () => {
  it('walks every page when nothing aborts', async () => {
    const { ids, err } = await walk(new AbortController().signal)
    expect(err).toBeUndefined()
    expect(ids).toHaveLength(3)
    expect(requests).toHaveLength(3)
  })

  it('an abort between pages ends the iteration with the signal reason; no further page is asked for', async () => {
    const stop = new AbortController()
    const { ids, err } = await walk(stop.signal, () => stop.abort())
    expect(err).toBe(stop.signal.reason)
    expect((err as Error).name).toBe('AbortError')
    expect(ids).toHaveLength(1)
    expect(requests).toHaveLength(1)
  })

  it('an abort during a page request aborts that request and ends the iteration with the signal reason', async () => {
    const stop = new AbortController()
    onRequest = (n) => {
      if (n === 2) stop.abort()
    }
    try {
      const { ids, err } = await walk(stop.signal)
      expect(err).toBe(stop.signal.reason)
      expect(ids).toHaveLength(1)
      expect(requests).toHaveLength(2)
      // The second page never arrived: its request was aborted on the wire, not left to finish.
      expect(requests[1]!.signal?.aborted).toBe(true)
      expect(await requests[1]!.outcome).toBe('failed: AbortError')
    } finally {
      onRequest = () => undefined
    }
  })

  it('an already aborted signal asks for no page at all', async () => {
    const { ids, err } = await walk(AbortSignal.abort())
    expect((err as Error).name).toBe('AbortError')
    expect(ids).toEqual([])
    expect(requests).toHaveLength(0)
  })
})
