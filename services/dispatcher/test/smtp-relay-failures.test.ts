import type { Socket } from 'node:net'
import { Metrics } from '@mailer/observability'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { SmtpConnection, SmtpConnectionError } from '../src/infra/smtp/connection.js'
import { SmtpPool } from '../src/infra/smtp/pool.js'
import { closeAll, closers, message, opts, relay, relayClient, scripted, session } from './smtp-fixtures.js'

// A relay failing in ways smtp-server will not on request: replies that never end, sessions
// closed with 421. The ordinary session is smtp-session.test.ts.
afterEach(closeAll)

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
    // 2 s, not less: the time-out also bounds the greeting and the second send, and a stall of the
    // event loop past it ended the wrong wait. The drip never completes, so only the bound ends it.
    const pool = new SmtpPool({ ...opts(r.port, { timeoutMs: 2_000 }), size: 1 })
    closers.unshift(async () => pool.close())
    const stuck = await pool.send({ from: 'a@sender.test', to: ['b@x.test'] }, message()).catch((e) => e)
    expect(stuck).toBeInstanceOf(SmtpConnectionError)
    expect(stuck).toMatchObject({ bodySent: false, message: expect.stringContaining('no complete answer') })
    // The only slot is free again: the next message goes out on a new session.
    expect((await pool.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.code).toBe(250)
  })

  it('a drip-fed answer to the final dot ends the send too, at its own time-out, as a message that may have arrived', async () => {
    const r = await dripFeeding('dot')
    // 2 s: a stall of the event loop past a shorter one could let the socket's idle time-out end
    // the wait first, with another message. The drip never completes, so only the bound ends it.
    const c = await session(opts(r.port, { timeoutMs: 10_000, dataTimeoutMs: 2_000 }))
    const stuck = await c.send({ from: 'a@sender.test', to: ['b@x.test'] }, message()).catch((e) => e)
    expect(stuck).toMatchObject({ bodySent: true, message: 'no complete answer from the relay in 2000 ms' })
    expect(c.usable).toBe(false)
  })

  it('the answer to the final dot may come later than the time-out, within its own (a filter before the queue)', async () => {
    let dots = 0
    const r = await scripted((line, socket) => {
      const verb = line.slice(0, 4).toUpperCase()
      if (verb === 'EHLO') socket.write('250-hi\r\n250 PIPELINING\r\n')
      else if (verb === 'MAIL' || verb === 'RCPT') socket.write('250 ok\r\n')
      else if (line === 'DATA') socket.write('354 go\r\n')
      // Silent for three times the time-out before it answers: no data, no continuation line.
      else if (line === '.') setTimeout(() => socket.write(`250 queued as ${++dots}\r\n`), 3_000)
      else if (verb === 'QUIT') socket.end('221 bye\r\n')
    })
    // A second for every other answer: a loaded machine is slower than 300 ms now and then.
    const c = await session(opts(r.port, { timeoutMs: 1_000, dataTimeoutMs: 30_000 }))
    const t = await c.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())
    expect(t.final).toEqual({ code: 250, text: '250 queued as 1' })
    expect(c.usable).toBe(true)
    // Idle again, the session closes after its ordinary time-out, not the final dot's.
    await vi.waitFor(() => expect(c.usable).toBe(false), { timeout: 10_000 })
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
    // The relay takes the message at its own pace: it stops reading four times for 1 s, at its
    // start and after each of its first 3 MB, so the upload lasts over the 3 s time-out however
    // fast the machine is, yet moves on within each time-out. Counted from the start of the
    // upload, the time-out ended the send in the fourth pause. Counted from its end, the answer
    // has the whole 3 s to come, for the little the sockets still hold (of 20 MB, most is still
    // to be written after the last pause): with 1 s, and no pauses, a loaded machine could take
    // longer than that to read what it held of a message written at full speed.
    const got: Buffer[] = []
    const r = await relay({
      size: 64 * 1024 * 1024,
      onData: (stream, _session, cb) => {
        let read = 0
        let pauses = 0
        stream.on('data', (c: Buffer) => {
          got.push(c)
          read += c.length
          if (pauses < 4 && read > pauses * 1024 * 1024) {
            pauses++
            stream.pause()
            setTimeout(() => stream.resume(), 1_000)
          }
        })
        stream.on('end', () => cb(null))
      },
    })
    const c = await session(opts(r.port, { timeoutMs: 3_000 }))
    const big = message(`${'x'.repeat(76)}\r\n`.repeat(260_000))
    const began = Date.now()
    const t = await c.send({ from: 'a@sender.test', to: ['b@x.test'] }, big)
    expect(t.final?.code).toBe(250)
    expect(Date.now() - began).toBeGreaterThan(4_000)
    expect(Buffer.concat(got).equals(big)).toBe(true)
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
    const client = relayClient(server.port, metrics)
    const envelope = { from: 'a@sender.test', to: ['b@x.test'] }
    const answers = []
    for (let i = 0; i < 6; i++) answers.push((await client.deliver(`email_${i}`, envelope, message()))[0]!)
    // The relay's own words while it was tried, then deferrals without calling it.
    expect(answers[0]).toMatchObject({ code: 421, text: '421 4.3.2 System shutting down' })
    expect(answers.at(-1)).toMatchObject({ code: null, text: 'relay unavailable (circuit breaker open)' })
    expect(mails).toBeLessThan(6)
    expect(await metrics.registry.getSingleMetricAsString('mailer_relay_421_relay_breaker_open')).toMatch(
      /relay_breaker_open 1$/m,
    )
  })

  it('a relay closing every session with its sending quota is not an outage: the breaker stays closed', async () => {
    let mails = 0
    const server = await closing((socket) => {
      mails++
      socket.end('421 4.7.0 Daily sending quota exceeded\r\n')
    })
    const metrics = new Metrics('relay_quota')
    const client = relayClient(server.port, metrics)
    const envelope = { from: 'a@sender.test', to: ['b@x.test'] }
    const answers = []
    for (let i = 0; i < 6; i++) answers.push((await client.deliver(`email_${i}`, envelope, message()))[0]!)
    // Every one is the relay's own quota answer (the platform limit), none the breaker's.
    for (const a of answers)
      expect(a).toMatchObject({
        stage: 'connection',
        code: 421,
        text: '421 4.7.0 Daily sending quota exceeded',
      })
    expect(mails).toBe(6)
    expect(await metrics.registry.getSingleMetricAsString('mailer_relay_quota_relay_breaker_open')).toMatch(
      /relay_breaker_open 0$/m,
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

describe('a session broken after refused recipients', () => {
  /**
   * A relay (PIPELINING, no SMTPUTF8) refusing `bad@x.test` with 550, then ending the session at the
   * next RCPT TO: with Postfix's `421 … too many errors` (`say421`), else by hanging up.
   */
  const refusing = (say421: boolean) => {
    const refused = new WeakSet<Socket>()
    return scripted((line, socket) => {
      const verb = line.slice(0, 4).toUpperCase()
      if (verb === 'EHLO') socket.write('250-hi\r\n250 PIPELINING\r\n')
      else if (verb === 'MAIL') socket.write('250 ok\r\n')
      else if (verb === 'RCPT' && refused.has(socket)) {
        if (say421) socket.end('421 4.7.0 relay.test Error: too many errors\r\n')
        else socket.destroy()
      } else if (line === 'RCPT TO:<bad@x.test>') {
        refused.add(socket)
        socket.write('550 5.1.1 <bad@x.test>: Recipient address rejected: User unknown\r\n')
      } else if (verb === 'RCPT') socket.write('250 ok\r\n')
    })
  }

  it('a 421 keeps the refusals answered before it; the others wait for a retry with the 421', async () => {
    const server = await refusing(true)
    const client = relayClient(server.port, new Metrics('relay_rcpt_421'))
    const to = ['a@x.test', 'bad@x.test', 'c@x.test', 'd@x.test']
    const replies = await client.deliver('email_1', { from: 's@sender.test', to }, message())
    expect(replies.map((r) => [r.address, r.stage, r.code])).toEqual([
      ['a@x.test', 'connection', 421],
      ['bad@x.test', 'rcpt', 550],
      ['c@x.test', 'connection', 421],
      ['d@x.test', 'connection', 421],
    ])
    expect(replies[1]!.text).toBe('550 5.1.1 <bad@x.test>: Recipient address rejected: User unknown')
    expect(replies[0]!.text).toBe('421 4.7.0 relay.test Error: too many errors')
  })

  it('so does a hang-up, and each refusal keeps its recipient among addresses the relay was not offered', async () => {
    const server = await refusing(false)
    const client = relayClient(server.port, new Metrics('relay_rcpt_hangup'))
    // The relay offers no SMTPUTF8: ü@x.test is not offered, and the refusal is the second one's.
    const to = ['ü@x.test', 'a@x.test', 'bad@x.test', 'c@x.test']
    const replies = await client.deliver('email_1', { from: 's@sender.test', to }, message())
    expect(replies.map((r) => [r.address, r.stage, r.code])).toEqual([
      ['ü@x.test', 'rcpt', 553],
      ['a@x.test', 'connection', null],
      ['bad@x.test', 'rcpt', 550],
      ['c@x.test', 'connection', null],
    ])
    expect(replies[0]!.text).toMatch(/^553 5\.6\.7 /)
  })
})
