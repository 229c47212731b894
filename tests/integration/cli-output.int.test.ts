import { execFile, execFileSync, spawn } from 'node:child_process'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { AdminClient } from '@mailer/client'
import { beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// What an operator's terminal and scripts get from the built `mailer` binary: output that data
// from senders cannot take over, pipes that close early, and bad flags caught before a request.
const root = fileURLToPath(new URL('../..', import.meta.url))
const bin = `${root}libs/cli/dist/main.js`
const { stack } = useStack(['auth', 'email', 'dispatcher', 'webhook', 'gateway'], {
  before: () => execFileSync(process.execPath, [`${root}libs/cli/scripts/build.mjs`], { stdio: 'inherit' }),
  timeout: 120_000,
})
let admin: AdminClient

beforeAll(async () => {
  admin = new AdminClient({ adminKey: ADMIN_KEY, baseUrl: stack.gatewayUrl })
  await admin.projects.create({ slug: 'out', name: 'Out' })
  await admin.project('out').domains.setup('out.test')
}, 120_000)

interface Run {
  code: number
  stdout: string
  stderr: string
}

const env = () => ({
  PATH: process.env.PATH ?? '',
  MAILER_URL: stack.gatewayUrl,
  MAILER_ADMIN_KEY: ADMIN_KEY,
})

function mailer(args: string[], extra: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    // The time-out stops a command that would poll forever (tail) where it should have refused to start.
    const opts = { env: { ...env(), ...extra }, timeout: 20_000 }
    execFile(process.execPath, [bin, ...args], opts, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr })
    })
  })
}

const ESC = '\u001b'
const BEL = '\u0007'

describe('human output', () => {
  it('never writes control characters from the data to the terminal (escape sequences are shown escaped)', async () => {
    // A sender's text and tags are the project's own data (display names and subjects refuse
    // control characters at the API): an escape sequence in them (here: set the window title,
    // bold) must not reach the operator's terminal.
    const sent = await admin.project('out').emails.send({
      from: 'Evil <hello@out.test>',
      to: 'ana@example.com',
      subject: 'Hello',
      text: `Hi ${ESC}]0;pwned${BEL} there`,
      tags: { note: `a${ESC}[1mb` },
    })
    const shown = await mailer(['emails', 'get', sent.id, '--project', 'out'])
    expect(shown.code).toBe(0)
    expect(shown.stdout).not.toMatch(/(?!\n)\p{Cc}/u)
    expect(shown.stdout).toContain('Hi \\u001b]0;pwned\\u0007 there')

    // --json is for programs: the API's answer, unchanged.
    const asJson = JSON.parse((await mailer(['emails', 'get', sent.id, '--project', 'out', '--json'])).stdout)
    expect(asJson.tags.note).toBe(`a${ESC}[1mb`)
  })

  it('tail ends quietly with code 0 when the reader of its output goes away (| head -1)', async () => {
    const child = spawn(
      process.execPath,
      [bin, 'tail', 'emails', '--project', 'out', '--lines', '0', '--interval', '1', '--json'],
      { env: env() },
    )
    let err = ''
    const following = new Promise<void>((resolve) => {
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString()
        if (err.includes('following emails')) resolve()
      })
    })
    const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)))
    await following
    const firstLine = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
    const mirror = admin.project('out')
    await mirror.emails.send({ from: 'hello@out.test', to: 'one@example.com', subject: 'One', text: 'x' })
    await firstLine
    // What `head -1` does once it has its line: close the pipe.
    child.stdout.destroy()
    await mirror.emails.send({ from: 'hello@out.test', to: 'two@example.com', subject: 'Two', text: 'x' })
    expect(await exited).toBe(0)
    expect(err).not.toContain('EPIPE')
    expect(err).not.toMatch(/\n\s+at /)
  })

  it('a closed stderr (2>&1 | head -1) keeps the exit code the command earned, not 1', async () => {
    const closedStderr = (args: string[], extra: Record<string, string> = {}) =>
      new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [bin, ...args], { env: { ...env(), ...extra } })
        // A reader that has gone: what the command says on stderr finds the pipe closed.
        child.stderr.destroy()
        let stdout = ''
        child.stdout.on('data', (c: Buffer) => {
          stdout += c.toString()
        })
        child.on('close', (code) => resolve({ code, stdout }))
      })
    expect((await closedStderr(['frobnicate'])).code).toBe(2)
    expect((await closedStderr(['projects', 'list'], { MAILER_ADMIN_KEY: '' })).code).toBe(2)
    expect((await closedStderr(['projects', 'list', '--url', 'http://127.0.0.1:1'])).code).toBe(3)
    expect((await closedStderr(['projects', 'get', 'nope'])).code).toBe(1)
    const listed = await closedStderr(['projects', 'list', '--json'])
    expect(listed.code).toBe(0)
    expect(JSON.parse(listed.stdout).data.map((p: { slug: string }) => p.slug)).toContain('out')
  })
})

describe('tail and Ctrl-C', () => {
  it('Ctrl-C during a poll the gateway does not answer ends tail at once with 130, without a stack trace', async () => {
    // A gateway that takes the request and never answers: the poll stays in flight (the SDK
    // would wait its 30 s time-out), as behind a stalled proxy.
    const held: ServerResponse[] = []
    let polled!: () => void
    const inFlight = new Promise<void>((resolve) => {
      polled = resolve
    })
    const server = createServer((_req, res) => {
      held.push(res)
      polled()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const child = spawn(process.execPath, [bin, 'tail', 'emails', '--json'], {
        env: {
          PATH: process.env.PATH ?? '',
          MAILER_URL: `http://127.0.0.1:${port}`,
          MAILER_API_KEY: 'fs_live_x',
        },
      })
      let err = ''
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString()
      })
      const exited = new Promise<number | string>((resolve) =>
        child.on('exit', (code, signal) => resolve(code ?? String(signal))),
      )
      await inFlight
      child.kill('SIGINT')
      // Far below the 30 s the old code sat out, far above what stopping takes on a busy machine.
      const late = new Promise<string>((resolve) =>
        setTimeout(() => resolve('still running'), 15_000).unref(),
      )
      const outcome = await Promise.race([exited, late])
      if (outcome === 'still running') child.kill('SIGKILL')
      expect(outcome).toBe(130)
      expect(err).not.toMatch(/\n\s+at /)
      expect(err).not.toContain('connection_failed')
    } finally {
      for (const res of held) res.destroy()
      server.close()
    }
  }, 40_000)
})

describe('send', () => {
  it('--subject is kept with --template (the input wins over the template), and --data needs --template', async () => {
    await admin
      .project('out')
      .templates.create({ name: 'welcome', subject: 'From the template', html: '<p>{{name}}</p>' })
    const r = await mailer([
      'send',
      '--project',
      'out',
      '--from',
      'hello@out.test',
      '--to',
      'ana@example.com',
      '--template',
      'welcome',
      '--data',
      '{"name":"Ana"}',
      '--subject',
      'My own subject',
      '--json',
    ])
    expect(r.code).toBe(0)
    const email = await admin.project('out').emails.get(JSON.parse(r.stdout).id)
    expect(email.subject).toBe('My own subject')

    // Without --subject the template's subject is used, not the CLI's default test subject.
    const plain = await mailer([
      'send',
      '--project',
      'out',
      '--to',
      'ana@example.com',
      '--from',
      'hello@out.test',
      '--template',
      'welcome',
      '--json',
    ])
    expect((await admin.project('out').emails.get(JSON.parse(plain.stdout).id)).subject).toBe(
      'From the template',
    )

    const lost = await mailer([
      'send',
      '--project',
      'out',
      '--to',
      'ana@example.com',
      '--from',
      'hello@out.test',
      '--data',
      '{"a":1}',
    ])
    expect(lost.code).toBe(2)
    expect(lost.stderr).toContain('--data')
    expect(lost.stdout).toBe('')
  })
})

describe('bad flags', () => {
  it('a --url (or MAILER_URL) that is not an http(s) URL is a usage error that never echoes a password', async () => {
    for (const url of ['localhost:3000', '127.0.0.1:3000', 'ftp://example.com', 'not a url']) {
      const r = await mailer(['projects', 'list', '--url', url])
      expect(r.code, url).toBe(2)
      expect(r.stderr, url).toMatch(/^error: .*http:\/\/localhost:3000/)
    }
    const fromEnv = await mailer(['projects', 'list'], { MAILER_URL: 'localhost:3000' })
    expect(fromEnv.code).toBe(2)
    expect(fromEnv.stderr).toContain('MAILER_URL')

    const withPassword = await mailer(['projects', 'list', '--url', 'http://ops:s3cret-pw@127.0.0.1:1'])
    expect(withPassword.code).toBe(2)
    expect(withPassword.stderr).not.toContain('s3cret-pw')
    // A key typed where the URL goes parses as a URL of scheme `adm-secretkey:`: not quoted either.
    for (const [args, extra] of [
      [['--url', 'adm-SECRETKEY:zz', 'projects', 'list'], {}],
      [['projects', 'list'], { MAILER_URL: 'adm-SECRETKEY:zz' }],
    ] as const) {
      const r = await mailer([...args], extra)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr, args.join(' ')).toMatch(/^error: (--url|MAILER_URL) must be .*http:\/\/localhost:3000/)
      expect((r.stderr + r.stdout).toLowerCase(), args.join(' ')).not.toContain('secretkey')
    }
  })

  it('a key no header can carry, or an id the URL would resolve away, is a usage error that never echoes the key', async () => {
    const pasted = 'adm-TOPSECRET\r\nX-Evil: 1'
    const bad = await mailer(['projects', 'list'], { MAILER_ADMIN_KEY: pasted })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/^error: /)
    expect(bad.stderr).not.toContain('TOPSECRET')
    const flag = await mailer(['--api-key', 'fs_live_TOPSECRET\u0001x', 'emails', 'list'])
    expect(flag.code).toBe(2)
    expect(flag.stderr).not.toContain('TOPSECRET')

    const dots = await mailer(['emails', 'get', '..', '--project', 'out'])
    expect(dots.code).toBe(2)
    expect(dots.stderr).toMatch(/^error: .*'\.\.'/)
  })

  it('a mistyped option or a bad option value is a usage error that names the option, never its value', async () => {
    const secret = 'adm-TOPSECRET-42'
    const typo = await mailer([`--admin-ky=${secret}`, 'emails', 'list'])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toMatch(/^error: unknown option '--admin-ky'\n\(Did you mean --admin-key\?\)/)
    for (const args of [
      ['emails', 'list', `--api-ky=${secret}`],
      ['emails', 'list', `--json=${secret}`],
      [`-X${secret}`, 'projects', 'list'],
      ['emails', 'list', '--project', 'out', '--limit', secret],
      ['keys', 'create', 'out', '--name', 'k', '--mode', secret],
    ]) {
      const r = await mailer(args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr, args.join(' ')).toMatch(/^error: /)
      expect(r.stderr + r.stdout, args.join(' ')).not.toContain('TOPSECRET')
    }
  })

  it('a key typed as the command word or as a positional is a usage error that names the position, never the word', async () => {
    const secret = 'fs_live_TOPSECRET0123456789abcdefghijk'
    const top = await mailer([secret])
    expect(top.code).toBe(2)
    expect(top.stderr).toMatch(/^error: unknown command for 'mailer' \(what was typed is not shown\)\n/)
    const sub = await mailer(['projects', secret])
    expect(sub.stderr).toMatch(/^error: unknown command for 'mailer projects' /)
    const positional = await mailer(['tail', secret])
    expect(positional.stderr).toMatch(
      /^error: argument 'what' of 'mailer tail' has an invalid value\. Allowed choices are emails, events\.\n/,
    )
    // A typo still gets its hint: the hint names a real command, not what was typed.
    const typo = await mailer(['projs'])
    expect(typo.stderr).toMatch(/^error: unknown command for 'mailer' .*\n\(Did you mean projects\?\)/)
    for (const args of [
      [secret],
      ['projects', secret],
      ['emails', secret, '--project', 'out'],
      ['tail', secret],
      ['help', secret],
      ['send', secret, '--to', 'ana@example.com'],
      ['projects', 'list', secret],
    ]) {
      const r = await mailer(args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr + r.stdout, args.join(' ')).not.toContain('TOPSECRET')
    }
  })

  it('tail --interval 0 (a busy loop against the gateway) and --count 0 are usage errors', async () => {
    for (const [flag, rule] of [
      ['--interval', 'from 1 to 2147483'],
      ['--count', 'of at least 1'],
    ]) {
      const r = await mailer(['tail', 'emails', '--project', 'out', flag!, '0'])
      expect(r.code, flag).toBe(2)
      expect(r.stderr, flag).toContain(`${flag} must be a whole number ${rule}`)
    }
  })

  it('tail --interval past what a timer holds (it would fire after 1 ms: a busy loop again) is a usage error', async () => {
    const r = await mailer(['tail', 'emails', '--project', 'out', '--interval', '3000000'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--interval must be a whole number from 1 to 2147483')
  })
})
