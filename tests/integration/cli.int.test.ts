import { execFile, execFileSync, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { MailerClient } from '@mailer/client'
import { describe, expect, it } from 'vitest'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// The built `mailer` binary (libs/cli/dist/main.js) against the real services.
const root = fileURLToPath(new URL('../..', import.meta.url))
const bin = `${root}libs/cli/dist/main.js`
const { stack } = useStack(['auth', 'email', 'webhook', 'gateway'], {
  before: () => execFileSync(process.execPath, [`${root}libs/cli/scripts/build.mjs`], { stdio: 'inherit' }),
  timeout: 120_000,
})

interface Run {
  code: number
  stdout: string
  stderr: string
}

function mailer(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const base = { PATH: process.env.PATH ?? '', MAILER_URL: stack.gatewayUrl, MAILER_ADMIN_KEY: ADMIN_KEY }
    execFile(process.execPath, [bin, ...args], { env: { ...base, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr })
    })
  })
}
const json = async (args: string[], env?: Record<string, string>) => {
  const r = await mailer([...args, '--json'], env)
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  return JSON.parse(r.stdout)
}

/** A project with a verified domain and a live key, made with the CLI itself. */
async function project(slug: string) {
  await json(['projects', 'create', slug, '--name', `Project ${slug}`])
  await json(['domains', 'setup', slug, `${slug}.test`])
  const key = await json(['keys', 'create', slug, '--name', 'live', '--mode', 'live'])
  return { key: key.key as string, keyId: key.id as string, from: `hello@${slug}.test` }
}

describe('exit codes', () => {
  it('0 on success, 1 on an API error (code on stderr), 2 on a usage error, 3 when the API is unreachable', async () => {
    expect((await mailer(['projects', 'list'])).code).toBe(0)

    const missing = await mailer(['projects', 'get', 'nope'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/^error: project_not_found: /)
    const asJson = await mailer(['projects', 'get', 'nope', '--json'])
    expect(JSON.parse(asJson.stderr).error).toMatchObject({ code: 'project_not_found', status: 404 })

    expect((await mailer(['projects', 'frobnicate'])).code).toBe(2)
    expect((await mailer(['keys', 'create', 'x'])).code).toBe(2)
    expect((await mailer(['suppressions', 'list', '--limit', 'ten'])).code).toBe(2)
    const noKey = await mailer(['projects', 'list'], { MAILER_ADMIN_KEY: '' })
    expect(noKey.code).toBe(2)
    expect(noKey.stderr).toContain('MAILER_ADMIN_KEY')

    const port = await closedPort()
    const down = await mailer(['projects', 'list', '--url', `http://127.0.0.1:${port}`])
    expect(down.code).toBe(3)
    expect(down.stderr).toContain('connection_failed')
  })

  it('takes keys and URL from flags as well as the environment', async () => {
    const r = await mailer(['--url', stack.gatewayUrl, '--admin-key', ADMIN_KEY, 'projects', 'list'], {
      MAILER_URL: '',
      MAILER_ADMIN_KEY: '',
    })
    expect(r.code).toBe(0)
    const wrong = await mailer(['--admin-key', 'wrong', 'projects', 'list'])
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain('invalid_api_key')
  })
})

describe('projects and keys', () => {
  it('create, list, get, update and disable projects, as tables and as JSON', async () => {
    const created = await json([
      'projects',
      'create',
      'cli-acme',
      '--name',
      'Acme',
      '--daily-limit',
      '100',
      '--no-rpc',
    ])
    expect(created).toMatchObject({ slug: 'cli-acme', dailyLimit: 100, rpcEnabled: false })
    const table = await mailer(['projects', 'list'])
    expect(table.stdout.split('\n')[0]).toMatch(/^SLUG\s+NAME\s+DAILY LIMIT\s+RPC\s+STATE/)
    expect(table.stdout).toMatch(/cli-acme\s+Acme\s+100\s+off\s+enabled/)
    expect(
      (await json(['projects', 'update', 'cli-acme', '--rpc', 'on', '--name', 'Acme Inc'])).rpcEnabled,
    ).toBe(true)
    expect((await json(['projects', 'get', 'cli-acme'])).name).toBe('Acme Inc')
    expect((await json(['projects', 'disable', 'cli-acme'])).disabled).toBe(true)
    expect((await json(['projects', 'update', 'cli-acme', '--enable'])).disabled).toBe(false)
  })

  it('create, list, rename and revoke keys; the full key is shown once', async () => {
    await json(['projects', 'create', 'cli-keys', '--name', 'Keys'])
    const made = await mailer(['keys', 'create', 'cli-keys', '--name', 'ci', '--mode', 'test'])
    expect(made.stdout).toMatch(/key\s+fs_test_[A-Za-z0-9]{32}/)
    expect(made.stdout).toContain('not shown again')
    const [k] = (await json(['keys', 'list', 'cli-keys'])).data
    expect(JSON.stringify(await json(['keys', 'list', 'cli-keys']))).not.toMatch(/fs_test_[A-Za-z0-9]{32}/)
    expect((await json(['keys', 'rename', k.id, 'deploy'])).name).toBe('deploy')
    expect((await json(['keys', 'revoke', k.id])).revokedAt).toEqual(expect.any(String))
    expect((await mailer(['keys', 'list', 'cli-keys'])).stdout).toMatch(
      /deploy\s+test\s+fs_test_\w{4}\s+revoked/,
    )
  })
})

describe('domains and suppressions', () => {
  it('sets up a domain and shows the DNS records to publish; verify re-checks them', async () => {
    await json(['projects', 'create', 'cli-dns', '--name', 'DNS'])
    const setup = await mailer(['domains', 'setup', 'cli-dns', 'cli-dns.test'])
    expect(setup.code).toBe(0)
    expect(setup.stdout).toContain('Publish these DNS records')
    expect(setup.stdout).toMatch(/TXT\s+\S*_domainkey\.cli-dns\.test/)
    expect(setup.stdout).toContain('v=DMARC1; p=none')
    const verified = await json(['domains', 'verify', 'cli-dns', 'cli-dns.test'])
    expect(verified).toMatchObject({ domain: 'cli-dns.test', verification: 'verified' })
    expect((await json(['domains', 'records', 'cli-dns', 'cli-dns.test'])).records).toHaveLength(3)
    expect((await mailer(['domains', 'list'])).stdout).toMatch(/cli-dns\s+cli-dns\.test\s+verified/)
    const unknown = await mailer(['domains', 'verify', 'cli-dns', 'other.test'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('domain_not_found')
  })

  it('adds, lists and removes suppressions', async () => {
    expect(await json(['suppressions', 'add', 'Bounced@Example.com', '--reason', 'complaint'])).toMatchObject(
      {
        address: 'bounced@example.com',
        reason: 'complaint',
      },
    )
    expect((await mailer(['suppressions', 'list', '--q', 'bounced'])).stdout).toMatch(
      /bounced@example\.com\s+complaint/,
    )
    expect(await json(['suppressions', 'remove', 'bounced@example.com'])).toEqual({
      address: 'bounced@example.com',
      deleted: true,
    })
    expect((await json(['suppressions', 'list', '--q', 'bounced'])).data).toEqual([])
  })
})

describe('emails and events', () => {
  it('sends a test email and lists and shows it, with the project key or through the admin mirror', async () => {
    const p = await project('cli-send')
    const sent = await json(['send', '--from', p.from, '--to', 'alice@example.com', '--tag', 'kind=test'], {
      MAILER_API_KEY: p.key,
    })
    expect(sent).toMatchObject({ status: 'queued' })
    const mirror = await json([
      'send',
      '--project',
      'cli-send',
      '--from',
      p.from,
      '--to',
      'bob@example.com',
      '--subject',
      'Via admin',
    ])
    expect(mirror.status).toBe('queued')

    const list = await mailer(['emails', 'list', '--project', 'cli-send'])
    expect(list.stdout).toMatch(new RegExp(`${mirror.id}\\s+queued\\s+bob@example.com\\s+Via admin`))
    expect(list.stdout).toContain(sent.id)
    const shown = await json(['emails', 'get', sent.id], { MAILER_API_KEY: p.key })
    expect(shown).toMatchObject({ subject: 'Test email from the mailer CLI', tags: { kind: 'test' } })
    const events = await json(['events', 'list', '--project', 'cli-send', '--email-id', sent.id])
    expect(events.data.map((e: { type: string }) => e.type)).toContain('email.queued')
    // With only the admin key: every project's emails.
    const across = await json(['emails', 'list', '--limit', '100'])
    expect(across.data.map((e: { id: string }) => e.id)).toEqual(expect.arrayContaining([sent.id, mirror.id]))
  })

  it('send --idempotency-key takes a key no HTTP header can carry (the SDK sends it in the body)', async () => {
    const p = await project('cli-idem')
    const args = ['send', '--from', p.from, '--to', 'alice@example.com', '--idempotency-key', '订单-42']
    const first = await json(args, { MAILER_API_KEY: p.key })
    expect(first).toMatchObject({ status: 'queued' })
    expect(await json(args, { MAILER_API_KEY: p.key })).toEqual({ ...first, idempotent: true })
    const human = await mailer(args.slice(0, -1).concat('订单-43'), { MAILER_API_KEY: p.key })
    expect(human.code).toBe(0)
    expect(human.stdout).not.toContain(first.id)
  })

  it('tail prints new emails as they are sent and stops after --count', async () => {
    const p = await project('cli-tail')
    const client = new MailerClient({ apiKey: p.key, baseUrl: stack.gatewayUrl })
    await client.emails.send({ from: p.from, to: 'before@example.com', subject: 'Before', text: 'x' })
    const child = spawn(
      process.execPath,
      [
        bin,
        'tail',
        'emails',
        '--project',
        'cli-tail',
        '--lines',
        '0',
        '--interval',
        '1',
        '--count',
        '2',
        '--json',
      ],
      {
        env: { PATH: process.env.PATH ?? '', MAILER_URL: stack.gatewayUrl, MAILER_ADMIN_KEY: ADMIN_KEY },
      },
    )
    let out = ''
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
    })
    const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)))
    // It says on stderr when its first poll has marked what already exists as seen.
    await new Promise<void>((resolve) => {
      let err = ''
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString()
        if (err.includes('following emails')) resolve()
      })
    })
    const a = await client.emails.send({ from: p.from, to: 'one@example.com', subject: 'One', text: 'x' })
    const b = await client.emails.send({ from: p.from, to: 'two@example.com', subject: 'Two', text: 'x' })
    expect(await exited).toBe(0)
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.map((l) => l.id)).toEqual([a.id, b.id])
  })
})

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}
