import { createServer, type Socket } from 'node:net'
import { TLSSocket } from 'node:tls'
import { Metrics } from '@mailer/observability'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { SmtpRelay } from '../src/infra/relay.js'
import { SmtpConnection, SmtpConnectionError, type SmtpOptions } from '../src/infra/smtp/connection.js'
import { closeAll, closers, message, opts, relay, selfSigned, session } from './smtp-fixtures.js'

afterEach(closeAll)

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
})
