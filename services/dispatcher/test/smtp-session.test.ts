import type { AddressInfo } from 'node:net'
import { createServer } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { repliesOf } from '../src/domain/smtp-transaction.js'
import { SmtpConnection, SmtpConnectionError } from '../src/infra/smtp/connection.js'
import { SmtpPool } from '../src/infra/smtp/pool.js'
import { closeAll, closers, message, opts, relay, scripted, session } from './smtp-fixtures.js'

afterEach(closeAll)

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
    expect(r.received[4]!.raw).toBe(`${message(body).toString()}\r\n`)
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

  // In clear text because SMTP_STARTTLS=never says so; by default a relay without STARTTLS is never
  // given the credentials (smtp-tls.test.ts).
  it('logs in with AUTH PLAIN or AUTH LOGIN (SMTP_STARTTLS=never); wrong credentials are a connection error with the code', async () => {
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
      const c = await session(opts(r.port, { starttls: 'never', auth: { user: 'u', pass: 'p é' } }))
      expect((await c.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.code).toBe(250)
      const bad = await SmtpConnection.open(
        opts(r.port, { starttls: 'never', auth: { user: 'u', pass: 'wrong' } }),
      ).catch((e) => e)
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
    // 2 s: the time-out also bounds the greeting, which a stalled event loop could outlast.
    const c = await session(opts(silent.port, { timeoutMs: 2_000 }))
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
