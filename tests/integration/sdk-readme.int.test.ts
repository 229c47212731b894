import { fileURLToPath } from 'node:url'
import * as client from '@mailer/client'
import { AdminClient, MailerClient } from '@mailer/client'
import { waitFor } from '@mailer/testing'
import * as nats from 'nats'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runnable, tsBlocks, typecheckBlocks } from '../support/readme-blocks.js'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// The SDK's README is its user's guide: every ```ts block must compile as a user's module and
// do what it says against the real services. The names a block leaves to the reader (`input`,
// `userId`, an Express `app`, ...) are declared for the type check and given for the run; the
// two addresses the README writes for "your deployment" become the test's gateway and NATS.
const README = fileURLToPath(new URL('../../libs/client/README.md', import.meta.url))
const blocks = tsBlocks(README)
const { te, stack, receiver } = useStack(['auth', 'email', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '200' },
  receiver: true,
})
let admin: AdminClient

const GLOBALS = `
declare const userId: string
declare const input: import('@mailer/client').SendEmailInput
declare const a: import('@mailer/client').SendEmailInput
declare const b: import('@mailer/client').SendEmailInput
declare const id: string
declare const baseUrl: string
declare const mailer: import('@mailer/client').MailerClient
declare const app: import('express').Express
declare const express: typeof import('express')
`

beforeAll(async () => {
  admin = new AdminClient({ adminKey: ADMIN_KEY, baseUrl: stack.gatewayUrl })
})

const savedEnv = { ...process.env }
const given: string[] = []
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k]
  Object.assign(process.env, savedEnv)
  for (const k of given.splice(0)) delete (globalThis as Record<string, unknown>)[k]
})

/** Runs the one block holding `marker`, with `globals` as the reader's names. */
async function run(marker: string, globals: Record<string, unknown>, modules: Record<string, unknown> = {}) {
  const found = blocks.filter((b) => b.includes(marker))
  expect(found, marker).toHaveLength(1)
  ran.add(found[0]!)
  const code = found[0]!
    .replaceAll("'https://mail.example.com'", JSON.stringify(stack.gatewayUrl))
    .replaceAll("'nats://nats:4222'", JSON.stringify(te.natsUrl))
  for (const [k, v] of Object.entries(globals)) {
    ;(globalThis as Record<string, unknown>)[k] = v
    given.push(k)
  }
  await runnable(code)({ '@mailer/client': client, ...modules })
}
const ran = new Set<string>()
const send = (to: string, extra: Partial<client.SendEmailInput> = {}): client.SendEmailInput => ({
  from: 'hello@acme.com',
  to,
  subject: 'Hi',
  text: 'Hi',
  ...extra,
})

describe('libs/client/README.md', () => {
  it('every ts block compiles as a user module', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5)
    const dir = fileURLToPath(new URL('.', import.meta.url))
    const tsconfig = fileURLToPath(new URL('../../tsconfig.base.json', import.meta.url))
    expect(typecheckBlocks(blocks, dir, GLOBALS, tsconfig)).toEqual([])
  }, 60_000)

  it('"Admin key" sets up a project, a key, a domain and a suppression, and sends through the mirror', async () => {
    process.env.MAILER_ADMIN_KEY = ADMIN_KEY
    await run('new AdminClient', { baseUrl: stack.gatewayUrl })
    expect((await admin.apiKeys.list('acme')).data.map((k) => k.name)).toEqual(['production'])
    expect((await admin.domains.list()).data.map((d) => d.domain)).toContain('acme.com')
    expect((await admin.suppressions.list({ q: 'gone@example.com' })).data).toHaveLength(1)
    const sent = await admin.emails.list({ project: 'acme' })
    expect(sent.data.map((e) => [e.to, e.source])).toEqual([[['ana@example.com'], 'admin']])
  })

  it('"Send an email" sends once per idempotency key', async () => {
    process.env.MAILER_API_KEY = (await admin.apiKeys.create('acme', { name: 'readme', mode: 'live' })).key
    await run("subject: 'Welcome'", { userId: '42' })
    const mailer = new MailerClient({ baseUrl: stack.gatewayUrl })
    const welcome = (await mailer.emails.list({ q: 'Welcome' })).data
    expect(welcome.map((e) => e.status)).toEqual(['queued'])
    const again = await mailer.emails.send(
      { from: 'Acme <hello@acme.com>', to: 'ana@example.com', subject: 'Welcome', html: '<p>Hi Ana</p>' },
      { idempotencyKey: 'welcome-42' },
    )
    expect(again).toMatchObject({ id: welcome[0]!.id, idempotent: true })
  })

  it('"Errors" takes an API error and an unreachable server in their branches', async () => {
    const key = (await admin.apiKeys.create('acme', { name: 'errors', mode: 'test' })).key
    const mailer = new MailerClient({ apiKey: key, baseUrl: stack.gatewayUrl })
    await run('MailerConnectionError', { mailer, input: send('x@example.com', { from: 'x@elsewhere.test' }) })
    const down = new MailerClient({ apiKey: key, baseUrl: 'http://127.0.0.1:9' })
    await run('MailerConnectionError', { mailer: down, input: send('x@example.com') })
  })

  it('"RPC over NATS" sends, batches, reads, lists and cancels over the real RPC', async () => {
    const m = admin.project('acme')
    const later = new Date(Date.now() + 3_600_000).toISOString()
    const scheduled = await m.emails.send(send('later@example.com', { scheduledAt: later }))
    const opened: nats.NatsConnection[] = []
    process.env.NATS_PREFIX = te.natsPrefix
    try {
      await run(
        'MailerRpcClient',
        {
          input: send('rpc@example.com'),
          a: send('a@example.com'),
          b: send('b@example.com'),
          id: scheduled.id,
        },
        {
          nats: {
            headers: nats.headers,
            connect: async (o: nats.ConnectionOptions) => {
              const nc = await nats.connect(o)
              opened.push(nc)
              return nc
            },
          },
        },
      )
    } finally {
      for (const nc of opened) await nc.close()
    }
    expect(opened).toHaveLength(1)
    expect((await m.emails.get(scheduled.id)).status).toBe('canceled')
    const rpcSent = await m.emails.list({ q: 'Hi', to: 'rpc@example.com' })
    expect(rpcSent.data.map((e) => e.source)).toEqual(['rpc'])
    expect((await m.emails.list({ to: 'b@example.com' })).data.map((e) => e.source)).toEqual(['batch'])
  })

  it('"Verifying webhooks" accepts a real delivery and refuses a changed body', async () => {
    const hook = await admin.project('acme').webhooks.create({ url: receiver.url('/readme') })
    process.env.MAILER_WEBHOOK_SECRET = hook.secret
    let handler: ((req: unknown, res: unknown) => unknown) | undefined
    const app = {
      post: (_path: string, _raw: unknown, h: typeof handler) => {
        handler = h
      },
    }
    await run('verifyWebhook', { app, express: { raw: () => 'raw body parser' } })
    await admin.project('acme').webhooks.test(hook.id)
    const got = await waitFor(() => receiver.requests.find((r) => r.path === '/readme'))
    const answer = (body: string) => {
      const out: { status?: number; text?: string } = {}
      const res = {
        sendStatus: (s: number) => {
          out.status = s
        },
        status: (s: number) => ({ send: (t: string) => void Object.assign(out, { status: s, text: t }) }),
      }
      handler!({ headers: got.headers, body: Buffer.from(body) }, res)
      return out
    }
    expect(answer(got.raw)).toEqual({ status: 204 })
    expect(answer(got.raw.replace('"test":true', '"test":false'))).toEqual({
      status: 400,
      text: 'signature_mismatch',
    })
  })

  it('ran every block', () => {
    expect(blocks.filter((b) => !ran.has(b))).toEqual([])
  })
})
