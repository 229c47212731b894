import type { AddressInfo } from 'node:net'
import { createServer, type Server, type Socket } from 'node:net'
import { Metrics } from '@mailer/observability'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { repliesOf } from '../src/domain/smtp-transaction.js'
import { SmtpRelay } from '../src/infra/relay.js'
import { SmtpConnection, SmtpConnectionError } from '../src/infra/smtp/connection.js'
import { SmtpPool } from '../src/infra/smtp/pool.js'
import { closeAll, closers, message, opts, relay, session } from './smtp-fixtures.js'

afterEach(closeAll)

/** A scripted relay over plain TCP, for what smtp-server will not do on request. */
async function scripted(onLine: (line: string, socket: Socket, chunk: string) => void, greeting = '220 hi') {
  const chunks: string[] = []
  const server: Server = createServer((socket) => {
    socket.write(`${greeting}\r\n`)
    let buf = ''
    socket.on('data', (d) => {
      chunks.push(d.toString())
      buf += d.toString()
      for (let i = buf.indexOf('\r\n'); i !== -1; i = buf.indexOf('\r\n')) {
        const line = buf.slice(0, i)
        buf = buf.slice(i + 2)
        onLine(line, socket, d.toString())
      }
    })
    socket.on('error', () => undefined)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(async () => {
    server.close()
  })
  return { port: (server.address() as AddressInfo).port, chunks }
}

describe('SMTP session', () => {
  it('pipelines a message to a relay offering PIPELINING: accepted recipients get the final answer, a refused one its own', async () => {
    const r = await relay({}, ['nobody@x.test'])
    const c = await session(opts(r.port))
    const to = ['b@x.test', 'nobody@x.test', 'c@x.test']
    const t = await c.send({ from: 'a@sender.test', to }, message())
    expect(repliesOf(to, t)).toEqual([
      { address: 'b@x.test', stage: 'message', code: 250, text: expect.stringMatching(/^250 /) },
      { address: 'nobody@x.test', stage: 'rcpt', code: 550, text: '550 5.1.1 No such user' },
      { address: 'c@x.test', stage: 'message', code: 250, text: expect.stringMatching(/^250 /) },
    ])
    expect(r.received).toEqual([
      {
        from: 'a@sender.test',
        mailArgs: expect.objectContaining({ SIZE: String(message().length) }),
        to: ['b@x.test', 'c@x.test'],
        raw: message().toString(),
      },
    ])
  })

  it('talks one command at a time to a relay without PIPELINING, with the same outcome', async () => {
    const r = await relay({ hidePIPELINING: true }, ['nobody@x.test'])
    const c = await session(opts(r.port))
    const to = ['nobody@x.test', 'b@x.test']
    const t = await c.send({ from: 'a@sender.test', to }, message())
    expect(repliesOf(to, t).map((x) => [x.address, x.stage, x.code])).toEqual([
      ['nobody@x.test', 'rcpt', 550],
      ['b@x.test', 'message', 250],
    ])
    // Everyone refused: no DATA, the transaction is reset and the session goes on.
    const none = await c.send({ from: 'a@sender.test', to: ['nobody@x.test'] }, message())
    expect(none.data).toBeNull()
    expect(repliesOf(['nobody@x.test'], none)[0]).toMatchObject({ stage: 'rcpt', code: 550 })
    await c.send({ from: 'a@sender.test', to: ['b@x.test'] }, message('again\r\n'))
    expect(r.received.map((m) => m.to)).toEqual([['b@x.test'], ['b@x.test']])
  })

  it('sends many messages on one session, lines starting with a dot arriving intact', async () => {
    const r = await relay()
    const c = await session(opts(r.port))
    const body = '.leading dot\r\n..two dots\r\nmiddle . dot\r\n.\r\nend without CRLF'
    for (let i = 0; i < 5; i++) await c.send({ from: 'a@sender.test', to: [`n${i}@x.test`] }, message(body))
    expect(r.received).toHaveLength(5)
    expect(r.received[4]!.raw).toBe(message(body).toString() + '\r\n')
    expect(r.sessions()).toBe(1)
  })

  it('declares an 8-bit message (BODY=8BITMIME) and an internationalised domain goes as punycode', async () => {
    const lines: string[] = []
    const server = await scripted((line, socket) => {
      lines.push(line)
      if (line.startsWith('EHLO')) socket.write('250-hi\r\n250-PIPELINING\r\n250 8BITMIME\r\n')
      else if (line.startsWith('MAIL') || line.startsWith('RCPT')) socket.write('250 ok\r\n')
      else if (line === 'DATA') socket.write('354 go\r\n')
      else if (line === '.') socket.write('250 queued\r\n')
    })
    const c = await session(opts(server.port))
    await c.send({ from: 'a@sender.test', to: ['b@bücher.test'] }, message('Grüße\r\n'))
    await c.send({ from: 'a@sender.test', to: ['b@x.test'] }, message('plain\r\n'))
    expect(lines.filter((l) => /^(MAIL|RCPT)/.test(l))).toEqual([
      'MAIL FROM:<a@sender.test> BODY=8BITMIME',
      'RCPT TO:<b@xn--bcher-kva.test>',
      'MAIL FROM:<a@sender.test>',
      'RCPT TO:<b@x.test>',
    ])
  })

  it('a relay without SMTPUTF8 is never offered a non-ASCII local part: those recipients, or a non-ASCII sender, get 5.6.7 unsent', async () => {
    const lines: string[] = []
    const server = await scripted((line, socket) => {
      lines.push(line)
      if (line.startsWith('EHLO')) socket.write('250-hi\r\n250-PIPELINING\r\n250 8BITMIME\r\n')
      else if (line.startsWith('MAIL') || line.startsWith('RCPT')) socket.write('250 ok\r\n')
      else if (line === 'DATA') socket.write('354 go\r\n')
      else if (line === '.') socket.write('250 queued\r\n')
    })
    const c = await session(opts(server.port))
    const to = ['jürgen@x.test', 'b@bücher.test', 'zoë@x.test']
    const t = await c.send({ from: 'a@sender.test', to }, message())
    expect(repliesOf(to, t).map((x) => [x.address, x.stage, x.code])).toEqual([
      ['jürgen@x.test', 'rcpt', 553],
      ['b@bücher.test', 'message', 250],
      ['zoë@x.test', 'rcpt', 553],
    ])
    expect(repliesOf(to, t)[0]!.text).toMatch(/^553 5\.6\.7 .*SMTPUTF8/)
    const none = await c.send({ from: 'a@sender.test', to: ['jürgen@x.test'] }, message())
    const utf8Sender = await c.send({ from: 'jürgen@sender.test', to: ['b@x.test'] }, message())
    for (const x of [...repliesOf(['jürgen@x.test'], none), ...repliesOf(['b@x.test'], utf8Sender)])
      expect(x).toMatchObject({ stage: 'message', code: 553 })
    expect(lines.filter((l) => /^(MAIL|RCPT)/.test(l))).toEqual([
      'MAIL FROM:<a@sender.test>',
      'RCPT TO:<b@xn--bcher-kva.test>',
    ])
    expect(c.usable).toBe(true)
  })

  it('a message refused after DATA is refused for every recipient, and the session stays usable', async () => {
    let refuseNext = true
    const r = await relay({
      onData: (stream, _s, cb) => {
        stream.resume()
        stream.on('end', () => {
          if (refuseNext) {
            refuseNext = false
            return cb(Object.assign(new Error('5.7.1 Message rejected as spam'), { responseCode: 554 }))
          }
          cb(null)
        })
      },
    })
    const c = await session(opts(r.port))
    const to = ['b@x.test', 'c@x.test']
    const refused = await c.send({ from: 'a@sender.test', to }, message())
    expect(repliesOf(to, refused).map((x) => [x.stage, x.code, x.text])).toEqual([
      ['message', 554, '554 5.7.1 Message rejected as spam'],
      ['message', 554, '554 5.7.1 Message rejected as spam'],
    ])
    const ok = await c.send({ from: 'a@sender.test', to }, message())
    expect(ok.final?.code).toBe(250)
  })

  it('a NUL in a reply (a broken relay) is kept as U+FFFD, so the outcome stays storable', async () => {
    const r = await scripted((line, socket) => {
      const verb = line.slice(0, 4).toUpperCase()
      if (verb === 'RCPT') socket.write('550 5.1.1 No\u0000such user\r\n')
      else if (verb === 'QUIT') socket.end('221 bye\r\n')
      else socket.write('250 ok\r\n')
    })
    const c = await session(opts(r.port))
    const t = await c.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())
    expect(repliesOf(['b@x.test'], t).map((x) => [x.stage, x.code, x.text])).toEqual([
      ['rcpt', 550, '550 5.1.1 No\uFFFDsuch user'],
    ])
  })

  it('logs in with AUTH PLAIN or AUTH LOGIN; wrong credentials are a connection error with the code', async () => {
    for (const method of ['PLAIN', 'LOGIN']) {
      const r = await relay({
        disabledCommands: ['STARTTLS'],
        allowInsecureAuth: true,
        authMethods: [method],
        onAuth: (auth, _s, cb) =>
          auth.username === 'u' && auth.password === 'p é'
            ? cb(null, { user: 'u' })
            : cb(Object.assign(new Error('Invalid credentials'), { responseCode: 535 })),
      })
      const c = await session(opts(r.port, { auth: { user: 'u', pass: 'p é' } }))
      expect((await c.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.code).toBe(250)
      const bad = await SmtpConnection.open(opts(r.port, { auth: { user: 'u', pass: 'wrong' } })).catch(
        (e) => e,
      )
      expect(bad).toBeInstanceOf(SmtpConnectionError)
      expect(bad).toMatchObject({ code: 535, message: expect.stringContaining(`AUTH ${method} refused`) })
    }
  })

  it('falls back to HELO for a relay that does not know EHLO, sending one command at a time', async () => {
    const lines: string[] = []
    const old = await scripted((line, socket) => {
      lines.push(line)
      if (line.startsWith('EHLO')) socket.write('502 5.5.1 command not recognized\r\n')
      else if (line.startsWith('HELO')) socket.write('250 hello\r\n')
      else if (line.startsWith('MAIL') || line.startsWith('RCPT')) socket.write('250 ok\r\n')
      else if (line === 'DATA') socket.write('354 go\r\n')
      else if (line === '.') socket.write('250 queued\r\n')
    })
    const c = await session(opts(old.port))
    expect((await c.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.code).toBe(250)
    expect(lines.filter((l) => /^(EHLO|HELO|MAIL|RCPT|DATA)/.test(l)).map((l) => l.split(' ')[0])).toEqual([
      'EHLO',
      'HELO',
      'MAIL',
      'RCPT',
      'DATA',
    ])
    expect(old.chunks.find((x) => x.startsWith('MAIL'))).toBe('MAIL FROM:<a@sender.test>\r\n')
  })

  it('a refused greeting, a relay that stops answering and one that closes are connection errors', async () => {
    const busy = await scripted(() => undefined, '421 4.3.2 Too busy')
    await expect(SmtpConnection.open(opts(busy.port))).rejects.toMatchObject({
      code: 421,
      message: expect.stringContaining('Too busy'),
    })

    const silent = await scripted((line, socket) => {
      if (line.startsWith('EHLO')) socket.write('250-hi\r\n250 PIPELINING\r\n')
      // Never answers MAIL FROM and the rest.
    })
    const c = await session(opts(silent.port, { timeoutMs: 300 }))
    const stuck = await c.send({ from: 'a@sender.test', to: ['b@x.test'] }, message()).catch((e) => e)
    expect(stuck).toMatchObject({ bodySent: false, message: expect.stringContaining('no answer') })
    expect(c.usable).toBe(false)

    // A 5xx to MAIL FROM followed by a hang-up is the relay's answer, not a broken session.
    const refusing = await scripted((line, socket) => {
      if (line.startsWith('EHLO')) socket.write('250-hi\r\n250 PIPELINING\r\n')
      else if (line.startsWith('MAIL')) socket.end('554 5.7.1 Sender blocked\r\n')
    })
    const r = await session(opts(refusing.port))
    const blocked = await r.send({ from: 'a@sender.test', to: ['b@x.test', 'c@x.test'] }, message())
    expect(repliesOf(['b@x.test', 'c@x.test'], blocked).map((x) => [x.stage, x.code])).toEqual([
      ['message', 554],
      ['message', 554],
    ])
    expect(r.usable).toBe(false)

    const hangup = await scripted((line, socket) => {
      if (line.startsWith('EHLO')) socket.write('250-hi\r\n250 PIPELINING\r\n')
      else if (line.startsWith('MAIL')) socket.write('250 ok\r\n')
      else if (line.startsWith('RCPT')) socket.write('250 ok\r\n')
      else if (line === 'DATA') socket.write('354 go\r\n')
      else if (line === '.') socket.destroy()
    })
    const h = await session(opts(hangup.port))
    const dropped = await h.send({ from: 'a@sender.test', to: ['b@x.test'] }, message()).catch((e) => e)
    // The message went out: the relay may have it, so it is never re-sent behind the caller's back.
    expect(dropped).toMatchObject({ bodySent: true })
    // MAIL FROM, RCPT TO and DATA travelled together; then the message and its dot together.
    expect(hangup.chunks.filter((x) => x.startsWith('MAIL'))).toEqual([
      'MAIL FROM:<a@sender.test>\r\nRCPT TO:<b@x.test>\r\nDATA\r\n',
    ])
    expect(hangup.chunks.at(-1)).toBe(`${message().toString()}.\r\n`)
  })
})

describe('SMTP session time limits', () => {
  /** Answers MAIL FROM (or the final dot, `at: 'dot'`) with continuation lines that never end. */
  const dripFeeding = (at: 'mail' | 'dot', every = 50, once = true) => {
    let drips = 0
    const dripping = new WeakSet<Socket>()
    return scripted((line, socket) => {
      const verb = line.slice(0, 4).toUpperCase()
      // Once dripping, the session says nothing else (the pipelined RCPT and DATA get no answer).
      if (dripping.has(socket)) return
      const drip = (at === 'mail' ? verb === 'MAIL' : line === '.') && (!once || drips++ === 0)
      if (drip) {
        dripping.add(socket)
        const timer = setInterval(() => {
          if (socket.destroyed) clearInterval(timer)
          else socket.write('250-still thinking\r\n')
        }, every)
      } else if (verb === 'EHLO') socket.write('250-hi\r\n250 PIPELINING\r\n')
      else if (verb === 'MAIL' || verb === 'RCPT') socket.write('250 ok\r\n')
      else if (line === 'DATA') socket.write('354 go\r\n')
      else if (line === '.') socket.write('250 queued\r\n')
      else if (verb === 'QUIT') socket.end('221 bye\r\n')
    })
  }

  it('a reply drip-fed line by line is bounded by the time-out as a whole: the send ends and the pool slot is freed', async () => {
    const r = await dripFeeding('mail')
    const pool = new SmtpPool({ ...opts(r.port, { timeoutMs: 300 }), size: 1 })
    closers.unshift(async () => pool.close())
    const stuck = await pool.send({ from: 'a@sender.test', to: ['b@x.test'] }, message()).catch((e) => e)
    expect(stuck).toBeInstanceOf(SmtpConnectionError)
    expect(stuck).toMatchObject({ bodySent: false, message: expect.stringContaining('no complete answer') })
    // The only slot is free again: the next message goes out on a new session.
    expect((await pool.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.code).toBe(250)
  })

  it('a drip-fed answer to the final dot ends the send too, as a message that may have arrived', async () => {
    const r = await dripFeeding('dot')
    const c = await session(opts(r.port, { timeoutMs: 300 }))
    const stuck = await c.send({ from: 'a@sender.test', to: ['b@x.test'] }, message()).catch((e) => e)
    expect(stuck).toMatchObject({ bodySent: true, message: expect.stringContaining('no complete answer') })
    expect(c.usable).toBe(false)
  })

  it('a reply that never ends is refused once it is too long, not kept in memory', async () => {
    const flood = await scripted((line, socket) => {
      if (line.startsWith('EHLO')) socket.write(`250-hi\r\n${'250-more\r\n'.repeat(20_000)}`)
    })
    const err = await SmtpConnection.open(opts(flood.port, { timeoutMs: 5_000 })).catch((e) => e)
    expect(err).toBeInstanceOf(SmtpConnectionError)
    expect(err.message).toMatch(/reply too long/)
  })

  it('a large message is not cut short by the time-out while it is still being written', async () => {
    const r = await relay()
    const c = await session(opts(r.port, { timeoutMs: 1_000 }))
    const big = message(`${'x'.repeat(76)}\r\n`.repeat(100_000))
    const t = await c.send({ from: 'a@sender.test', to: ['b@x.test'] }, big)
    expect(t.final?.code).toBe(250)
    expect(r.received[0]!.raw.length).toBe(big.length)
  })
})

describe('SMTP pool', () => {
  it('keeps at most `size` sessions and reuses them', async () => {
    const r = await relay()
    const pool = new SmtpPool({ ...opts(r.port), size: 3 })
    closers.unshift(async () => pool.close())
    const sends = Array.from({ length: 30 }, (_, i) =>
      pool.send({ from: 'a@sender.test', to: [`n${i}@x.test`] }, message()),
    )
    const done = await Promise.all(sends)
    expect(done.every((t) => t.final?.code === 250)).toBe(true)
    expect(r.received).toHaveLength(30)
    expect(r.sessions()).toBe(3)
  })

  it('a session the relay closed while idle is replaced, and the send goes through once', async () => {
    let n = 0
    const server = await scripted((line, socket) => {
      if (line.startsWith('EHLO')) socket.write('250-hi\r\n250 PIPELINING\r\n')
      else if (line.startsWith('MAIL') || line.startsWith('RCPT')) socket.write('250 ok\r\n')
      else if (line === 'DATA') socket.write('354 go\r\n')
      else if (line === '.') {
        n++
        socket.write(`250 queued ${n}\r\n`)
        // Says goodbye unasked once idle, as relays do at their idle time-out.
        setTimeout(() => socket.end('421 4.4.2 idle too long\r\n'), 20)
      }
    })
    const pool = new SmtpPool({ ...opts(server.port), size: 1 })
    closers.unshift(async () => pool.close())
    expect((await pool.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.text).toBe(
      '250 queued 1',
    )
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await pool.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.text).toBe(
      '250 queued 2',
    )
    expect(n).toBe(2)
  })

  it('a reused session that breaks before the message went out is retried once on a fresh one', async () => {
    let connections = 0
    let mails = 0
    let delivered = 0
    const server = await scripted((line, socket) => {
      if (line.startsWith('EHLO')) {
        connections++
        socket.write('250-hi\r\n250 PIPELINING\r\n')
      } else if (line.startsWith('MAIL')) {
        mails++
        // The second message on the first session finds it gone (the relay restarted, say).
        if (mails === 2) socket.destroy()
        else socket.write('250 ok\r\n')
      } else if (line.startsWith('RCPT')) socket.write('250 ok\r\n')
      else if (line === 'DATA') socket.write('354 go\r\n')
      else if (line === '.') {
        delivered++
        socket.write('250 queued\r\n')
      }
    })
    const pool = new SmtpPool({ ...opts(server.port), size: 1 })
    closers.unshift(async () => pool.close())
    for (let i = 0; i < 2; i++)
      expect((await pool.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.code).toBe(250)
    expect({ connections, delivered }).toEqual({ connections: 2, delivered: 2 })
  })

  it('when the relay is down every send fails with a connection error, none waits forever', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const pool = new SmtpPool({ ...opts(port), size: 2 })
    closers.unshift(async () => pool.close())
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, () => pool.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())),
    )
    expect(results.map((x) => x.status)).toEqual(Array(6).fill('rejected'))
    for (const x of results) expect((x as PromiseRejectedResult).reason).toBeInstanceOf(SmtpConnectionError)
  })
})

describe('421: the relay is closing the session', () => {
  /** A relay answering every MAIL FROM with 421 and hanging up (shutting down, overloaded). */
  const closing = (onMail: (socket: Socket) => void) =>
    scripted((line, socket) => {
      const verb = line.slice(0, 4).toUpperCase()
      if (verb === 'EHLO') socket.write('250-hi\r\n250 PIPELINING\r\n')
      else if (verb === 'MAIL') onMail(socket)
      else if (verb === 'RCPT') socket.write('250 ok\r\n')
      else if (line === 'DATA') socket.write('354 go\r\n')
      else if (line === '.') socket.write('250 queued\r\n')
      else if (verb === 'QUIT') socket.end('221 bye\r\n')
    })

  it('a relay answering every message with 421 is an outage: the breaker opens and stops calling it', async () => {
    let mails = 0
    const server = await closing((socket) => {
      mails++
      socket.end('421 4.3.2 System shutting down\r\n')
    })
    const metrics = new Metrics('relay_421')
    const relayClient = new SmtpRelay(
      {
        url: `smtp://127.0.0.1:${server.port}`,
        starttls: 'offered',
        verifyTls: true,
        poolSize: 1,
        timeoutSeconds: 2,
        breaker: { resetSeconds: 60, minCalls: 3 },
      },
      metrics,
      pino({ level: 'silent' }),
    )
    closers.unshift(() => relayClient.close())
    const envelope = { from: 'a@sender.test', to: ['b@x.test'] }
    const answers = []
    for (let i = 0; i < 6; i++)
      answers.push((await relayClient.deliver(`email_${i}`, envelope, message()))[0]!)
    // The relay's own words while it was tried, then deferrals without calling it.
    expect(answers[0]).toMatchObject({ code: 421, text: '421 4.3.2 System shutting down' })
    expect(answers.at(-1)).toMatchObject({ code: null, text: 'relay unavailable (circuit breaker open)' })
    expect(mails).toBeLessThan(6)
    expect(await metrics.registry.getSingleMetricAsString('mailer_relay_421_relay_breaker_open')).toMatch(
      /relay_breaker_open 1$/m,
    )
  })

  it('a reused session answered with 421 is replaced and the message goes through on a fresh one', async () => {
    let mails = 0
    const server = await closing((socket) => {
      // The second message finds its (reused) session closing, as after a relay's reload.
      if (++mails === 2) socket.end('421 4.3.2 Closing, try again\r\n')
      else socket.write('250 ok\r\n')
    })
    const pool = new SmtpPool({ ...opts(server.port), size: 1 })
    closers.unshift(async () => pool.close())
    for (let i = 0; i < 2; i++)
      expect((await pool.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.code).toBe(250)
    expect(mails).toBe(3)
  })
})
