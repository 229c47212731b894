import { type AddressInfo, createServer, type Socket } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { SendAborted } from '../src/infra/smtp/connection.js'
import { SmtpPool } from '../src/infra/smtp/pool.js'
import { closeAll, closers, message, opts, relay } from './smtp-fixtures.js'

afterEach(closeAll)

/** A gate a relay's callbacks wait behind until the test opens it. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { opened, open, waiting: 0 }
}

// The dispatcher stops its pool when it drains (SmtpRelay.stopSending). Time-outs here are long
// (10 s): a send that ends sooner ended because of the stop, not because the relay was silent.
describe('SMTP pool stop', () => {
  it('gives up a send whose final dot has not gone out, and waits for the answer of one whose dot has', async () => {
    const rcpt = gate()
    const answer = gate()
    const r = await relay({
      onRcptTo: (a, _s, cb) => {
        if (a.address !== 'early@x.test') return cb()
        rcpt.waiting++
        void rcpt.opened.then(() => cb())
      },
      onData: (stream, _s, cb) => {
        stream.resume()
        stream.on('end', () => {
          answer.waiting++
          void answer.opened.then(() => cb(null))
        })
      },
    })
    const pool = new SmtpPool({ ...opts(r.port, { timeoutMs: 10_000 }), size: 2 })
    closers.unshift(async () => pool.close())
    const early = pool.send({ from: 'a@sender.test', to: ['early@x.test'] }, message())
    const late = pool.send({ from: 'a@sender.test', to: ['late@x.test'] }, message())
    early.catch(() => undefined)
    await vi.waitFor(() => expect([rcpt.waiting, answer.waiting]).toEqual([1, 1]), { timeout: 5_000 })

    pool.stop()
    await expect(early).rejects.toBeInstanceOf(SendAborted)
    answer.open()
    expect((await late).final?.code).toBe(250)
    // The given-up session never reached DATA: the relay saw one message only.
    rcpt.open()
    expect(answer.waiting).toBe(1)
    // Nothing new goes out once stopped, and no session is opened for it.
    await expect(pool.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).rejects.toBeInstanceOf(
      SendAborted,
    )
    expect(r.sessions()).toBe(2)
  })

  it('gives up a send that took an idle session just before the stop, as not sent', async () => {
    // The session is idle when the send takes it; the send writes nothing until the next tick,
    // and the stop in between ends the idle session (quit). Nothing reached the relay, so the send
    // is given up (SendAborted, its claim given back), not a relay failure that defers the email
    // and counts an attempt.
    const r = await relay()
    const pool = new SmtpPool({ ...opts(r.port, { timeoutMs: 10_000 }), size: 1 })
    closers.unshift(async () => pool.close())
    expect((await pool.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())).final?.code).toBe(250)
    const taken = pool.send({ from: 'a@sender.test', to: ['c@x.test'] }, message())
    pool.stop()
    await expect(taken).rejects.toBeInstanceOf(SendAborted)
    expect(r.received).toHaveLength(1)
  })

  it('gives up a session still opening and a send waiting for a free session', async () => {
    // A relay that accepts the connection and never greets.
    const sockets = new Set<Socket>()
    const silent = createServer((s) => {
      sockets.add(s)
      s.on('error', () => undefined)
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    closers.push(async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => silent.close(() => resolve()))
    })
    const pool = new SmtpPool({
      ...opts((silent.address() as AddressInfo).port, { timeoutMs: 10_000 }),
      size: 1,
    })
    closers.unshift(async () => pool.close())
    const opening = pool.send({ from: 'a@sender.test', to: ['b@x.test'] }, message())
    const queued = pool.send({ from: 'a@sender.test', to: ['c@x.test'] }, message())
    await vi.waitFor(() => expect(sockets.size).toBe(1), { timeout: 5_000 })
    pool.stop()
    const results = await Promise.allSettled([opening, queued])
    for (const x of results) expect((x as PromiseRejectedResult).reason).toBeInstanceOf(SendAborted)
  })
})
