import { afterEach, describe, expect, it, vi } from 'vitest'
import { ClaimNotHeld } from '../src/infra/smtp/connection.js'
import { SmtpPool } from '../src/infra/smtp/pool.js'
import { closeAll, closers, message, opts, relay } from './smtp-fixtures.js'

afterEach(closeAll)

// The dispatcher passes its claim's fence (ClaimKeeper.holds) with every send: the relay must not
// get the final dot of a message whose email another replica may be sending.
describe('SMTP send fenced by the claim', () => {
  it('asks the fence right before the final dot; a no withholds the dot, and the send is not tried again', async () => {
    let openRcpt!: () => void
    const rcptOpened = new Promise<void>((resolve) => {
      openRcpt = resolve
    })
    let rcptWaiting = 0
    const r = await relay({
      onRcptTo: (a, _s, cb) => {
        if (a.address !== 'held@x.test') return cb()
        rcptWaiting++
        void rcptOpened.then(() => cb())
      },
    })
    const pool = new SmtpPool({ ...opts(r.port, { timeoutMs: 10_000 }), size: 1 })
    closers.unshift(async () => pool.close())
    // A session that has sent once: a failure on it before the dot would otherwise be tried again
    // on a fresh one.
    expect(
      (await pool.send({ from: 'a@sender.test', to: ['first@x.test'] }, message(), () => true)).final?.code,
    ).toBe(250)

    let ours = true
    let asked = 0
    const fenced = pool.send({ from: 'a@sender.test', to: ['held@x.test'] }, message('Fenced\r\n'), () => {
      asked++
      return ours
    })
    fenced.catch(() => undefined)
    await vi.waitFor(() => expect(rcptWaiting).toBe(1), { timeout: 5_000 })
    // The claim is lost while the relay has not answered yet: nothing asked so far.
    ours = false
    expect(asked).toBe(0)
    openRcpt()
    await expect(fenced).rejects.toBeInstanceOf(ClaimNotHeld)
    expect(asked).toBe(1)
    expect(r.received.map((m) => m.to)).toEqual([['first@x.test']])
    expect(r.sessions()).toBe(1)

    // The pool goes on: the next send opens a new session.
    expect(
      (await pool.send({ from: 'a@sender.test', to: ['next@x.test'] }, message(), () => true)).final?.code,
    ).toBe(250)
    expect(r.received.map((m) => m.to)).toEqual([['first@x.test'], ['next@x.test']])
  })
})
