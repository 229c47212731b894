import { createServer, type Socket } from 'node:net'
import { TLSSocket } from 'node:tls'
import { Metrics } from '@mailer/observability'
import pino from 'pino'
import type { SMTPServerOptions } from 'smtp-server'
import { afterEach, describe, expect, it } from 'vitest'
import { classify } from '../src/domain/smtp-reply.js'
import { SmtpRelay } from '../src/infra/relay.js'
import { SmtpConnection, SmtpConnectionError, type SmtpOptions } from '../src/infra/smtp/connection.js'
import { closeAll, closers, message, opts, relay, selfSigned, session } from './smtp-fixtures.js'

afterEach(closeAll)

/** smtp-server settings for a relay taking AUTH PLAIN and LOGIN; every login it was given is in `logins`. */
function loginRelay(
  logins: Array<{ user: string; pass: string; secure: boolean }>,
): Partial<SMTPServerOptions> {
  return {
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth: (auth, s, cb) => {
      logins.push({ user: auth.username ?? '', pass: auth.password ?? '', secure: s.secure })
      cb(null, { user: auth.username })
    },
  }
}

describe('SMTP session TLS', () => {
  it('upgrades with STARTTLS when offered and verifies the certificate', async () => {
    const pems = await selfSigned('localhost', true)
    let secured = false
    const r = await relay({
      disabledCommands: ['AUTH'],
      key: pems.private,
      cert: pems.cert,
      onMailFrom: (_a, session, cb) => {
        secured = session.secure
        cb()
      },
    })
    const trusted = await session(opts(r.port, { host: 'localhost', tls: { ca: pems.cert } }))
    expect((await trusted.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.code).toBe(250)
    expect(secured).toBe(true)
    // An unknown certificate ends the session before any message is offered.
    const untrusted = await SmtpConnection.open(opts(r.port, { host: 'localhost' })).catch((e) => e)
    expect(untrusted).toBeInstanceOf(SmtpConnectionError)
    expect(String(untrusted.message)).toMatch(/certificate/i)
  })

  it('STARTTLS as configured: never stays plain, required refuses a relay without it, an unverifiable certificate only with verification off', async () => {
    const pems = await selfSigned('relay.internal')
    const secured: boolean[] = []
    const r = await relay({
      disabledCommands: ['AUTH'],
      key: pems.private,
      cert: pems.cert,
      onMailFrom: (_a, s, cb) => {
        secured.push(s.secure)
        cb()
      },
    })
    const send = async (o: SmtpOptions) =>
      (await (await session(o)).send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.code
    // A self-signed certificate for another name: refused unless verification is off.
    const refused = await SmtpConnection.open(opts(r.port)).catch((e) => e)
    expect(refused).toBeInstanceOf(SmtpConnectionError)
    expect(await send(opts(r.port, { tls: { rejectUnauthorized: false } }))).toBe(250)
    expect(await send(opts(r.port, { starttls: 'never' }))).toBe(250)
    expect(secured).toEqual([true, false])
    expect(r.received).toHaveLength(2)

    const plain = await relay() // offers no STARTTLS
    const required = await SmtpConnection.open(opts(plain.port, { starttls: 'required' })).catch((e) => e)
    expect(required).toBeInstanceOf(SmtpConnectionError)
    expect(String(required.message)).toMatch(/does not offer STARTTLS/)
    expect(plain.received).toHaveLength(0)
    expect(await send(opts(plain.port))).toBe(250)
  })
  it('credentials never go to a relay that does not offer STARTTLS (stripped on the way?) unless SMTP_STARTTLS=never says so', async () => {
    const logins: Array<{ user: string; pass: string; secure: boolean }> = []
    const plain = await relay(loginRelay(logins))
    const auth = { user: 'u', pass: 'secret' }
    const send = async (o: SmtpOptions) =>
      (await (await session(o)).send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.code
    for (const starttls of [undefined, 'offered', 'required'] as const) {
      const refused = await SmtpConnection.open(opts(plain.port, { auth, ...(starttls ? { starttls } : {}) }))
        .then(() => 'logged in')
        .catch((e) => e)
      expect(refused).toBeInstanceOf(SmtpConnectionError)
      if (starttls !== 'required')
        expect(String(refused.message)).toMatch(/credentials .*SMTP_STARTTLS=never/)
    }
    // The password never reached the relay, and no mail went.
    expect(logins).toEqual([])
    expect(plain.received).toHaveLength(0)
    // Without credentials there is no password to lose: mail goes as before.
    expect(await send(opts(plain.port))).toBe(250)
    // Said explicitly: a login in clear text (a relay on the same host or pod).
    expect(await send(opts(plain.port, { auth, starttls: 'never' }))).toBe(250)
    expect(logins).toEqual([{ user: 'u', pass: 'secret', secure: false }])

    // A relay offering STARTTLS: the default logs in inside TLS, as before.
    const pems = await selfSigned('localhost', true)
    const tls = await relay({
      ...loginRelay(logins),
      disabledCommands: [],
      key: pems.private,
      cert: pems.cert,
    })
    expect(await send(opts(tls.port, { host: 'localhost', tls: { ca: pems.cert }, auth }))).toBe(250)
    expect(logins.at(-1)).toEqual({ user: 'u', pass: 'secret', secure: true })
  })

  it('ends the session when text follows the STARTTLS answer in plain text (RFC 3207)', async () => {
    const pems = await selfSigned('localhost', true)
    // A relay (or a man in the middle) that sends a reply line after its 220: read inside
    // TLS, it would prefix the answer to the client's next EHLO.
    const server = createServer((plain: Socket) => {
      let secured: TLSSocket | null = null
      const answer = (line: string) => {
        if (/^EHLO/i.test(line))
          (secured ?? plain).write(secured ? '250 relay\r\n' : '250-relay\r\n250 STARTTLS\r\n')
        else if (/^STARTTLS/i.test(line) && !secured) {
          plain.write('220 go ahead\r\n250-INJECTED\r\n')
          plain.removeAllListeners('data')
          secured = new TLSSocket(plain, { isServer: true, key: pems.private, cert: pems.cert })
          secured.on('data', (d) => String(d).split('\r\n').filter(Boolean).forEach(answer))
          secured.on('error', () => undefined)
        } else (secured ?? plain).write('250 ok\r\n')
      }
      plain.on('data', (d) => String(d).split('\r\n').filter(Boolean).forEach(answer))
      plain.on('error', () => undefined)
      plain.write('220 relay ESMTP\r\n')
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    closers.push(() => new Promise((r) => server.close(() => r())))
    const port = (server.address() as { port: number }).port
    const err = await SmtpConnection.open(opts(port, { host: 'localhost', tls: { ca: pems.cert } })).catch(
      (e) => e,
    )
    expect(err).toBeInstanceOf(SmtpConnectionError)
    expect(String(err.message)).toMatch(/after its STARTTLS answer/)
  })
})

describe('SmtpRelay TLS settings', () => {
  it('SMTP_TLS_VERIFY=false reaches a relay with a self-signed certificate; verified, its recipients wait for a retry', async () => {
    const pems = await selfSigned('relay.internal')
    const r = await relay({ disabledCommands: ['AUTH'], key: pems.private, cert: pems.cert })
    const logger = pino({ level: 'silent' })
    const make = (verifyTls: boolean) => {
      const relayClient = new SmtpRelay(
        {
          url: `smtp://127.0.0.1:${r.port}`,
          starttls: 'offered',
          verifyTls,
          poolSize: 1,
          timeoutSeconds: 2,
          dataTimeoutSeconds: 2,
          breaker: { resetSeconds: 30, minCalls: 100 },
        },
        new Metrics(`relay_tls_${verifyTls}`),
        logger,
      )
      closers.unshift(() => relayClient.close())
      return relayClient
    }
    const envelope = { from: 'a@sender.test', to: ['b@x.test'] }
    const [verified] = await make(true).deliver('email_1', envelope, message())
    expect(verified).toMatchObject({ stage: 'connection', code: null })
    expect(verified!.text).toMatch(/certificate/i)
    expect(r.received).toHaveLength(0)
    const [unverified] = await make(false).deliver('email_2', envelope, message())
    expect(unverified).toMatchObject({ stage: 'message', code: 250 })
    expect(r.received).toHaveLength(1)
  })

  it('the refusal defers every recipient naming SMTP_STARTTLS, is logged, and counts for the breaker like a refused login', async () => {
    const logins: Array<{ user: string; pass: string; secure: boolean }> = []
    const plain = await relay(loginRelay(logins))
    const logged: Array<{ level: number; msg: string; setting?: string }> = []
    const logger = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) })
    const client = (starttls: 'offered' | 'never') => {
      const c = new SmtpRelay(
        {
          url: `smtp://u:secret@127.0.0.1:${plain.port}`,
          starttls,
          verifyTls: true,
          poolSize: 1,
          timeoutSeconds: 2,
          dataTimeoutSeconds: 2,
          breaker: { resetSeconds: 60, minCalls: 3 },
        },
        new Metrics(`relay_plain_login_${starttls}`),
        logger,
      )
      closers.unshift(() => c.close())
      return c
    }
    const byDefault = client('offered')
    const envelope = { from: 'a@sender.test', to: ['b@x.test', 'c@x.test'] }
    const answers = []
    for (let i = 0; i < 6; i++) answers.push(await byDefault.deliver(`email_${i}`, envelope, message()))
    expect(answers[0]!.map((r) => [r.address, r.stage, r.code])).toEqual([
      ['b@x.test', 'connection', null],
      ['c@x.test', 'connection', null],
    ])
    expect(answers[0]![0]!.text).toMatch(/does not offer STARTTLS.*SMTP_STARTTLS=never/)
    expect(classify(answers[0]![0]!)).toBe('transient')
    // Counted as a relay failure (as a 535 to AUTH is): the breaker opened.
    expect(answers.at(-1)![0]).toMatchObject({ code: null, text: 'relay unavailable (circuit breaker open)' })
    expect(logged.find((l) => l.level === 50)).toMatchObject({
      setting: 'SMTP_STARTTLS',
      msg: expect.stringMatching(/credentials are not sent in clear text/),
    })
    expect(logins).toEqual([])
    expect(plain.received).toHaveLength(0)

    const [sent] = await client('never').deliver('email_7', envelope, message())
    expect(sent).toMatchObject({ stage: 'message', code: 250 })
    expect(logins).toEqual([{ user: 'u', pass: 'secret', secure: false }])
    expect(logged.filter((l) => l.level === 40).map((l) => l.msg)).toContain(
      'SMTP_STARTTLS=never: the SMTP_URL credentials go to the relay in clear text',
    )
  })
})
