import { createInbox, type Msg, type MsgHdrs, type NatsConnection } from 'nats'

export type ReplyFailure = 'no_responders' | 'timeout'

/** A request that got no answer: nobody listens on the subject, or nobody answered in time. */
export class ReplyError extends Error {
  constructor(
    readonly reason: ReplyFailure,
    subject: string,
  ) {
    super(reason === 'no_responders' ? `no responders on ${subject}` : `no reply on ${subject} in time`)
    this.name = 'ReplyError'
  }
}

interface Waiting {
  subject: string
  deadline: number
  resolve: (msg: Msg) => void
  reject: (err: ReplyError) => void
}

/**
 * Request-reply over one wildcard inbox subscription per connection (as nats.js muxes its own
 * requests), without what made nats.js's requests show in profiles: it builds a NatsError, stack
 * trace included, for every request it completes (to reject a promise nobody awaits), which was
 * 7 % of the email service's CPU under batch sends, plus the garbage. Deadlines are checked by one
 * timer for all requests, so an answer may be reported missing up to `tickMs` late.
 */
export class ReplyInbox {
  private readonly prefix = `${createInbox()}.`
  private readonly waiting = new Map<string, Waiting>()
  private readonly timer: NodeJS.Timeout
  private next = 0

  constructor(
    private readonly nc: NatsConnection,
    tickMs = 100,
  ) {
    nc.subscribe(`${this.prefix}*`, {
      callback: (err, msg) => {
        if (!err) this.settle(msg)
      },
    })
    this.timer = setInterval(() => this.expire(), tickMs)
    this.timer.unref()
  }

  request(
    subject: string,
    data: Uint8Array,
    opts: { timeoutMs: number; headers?: MsgHdrs | undefined },
  ): Promise<Msg> {
    const token = (this.next++).toString(36)
    return new Promise<Msg>((resolve, reject) => {
      this.waiting.set(token, { subject, deadline: Date.now() + opts.timeoutMs, resolve, reject })
      try {
        this.nc.publish(subject, data, { reply: this.prefix + token, headers: opts.headers })
      } catch (err) {
        // A closed or draining connection refuses at once.
        this.waiting.delete(token)
        reject(err)
      }
    })
  }

  /** After the connection closed: nothing more can arrive, so whoever still waits is told now. */
  close(): void {
    clearInterval(this.timer)
    for (const w of this.waiting.values()) w.reject(new ReplyError('timeout', w.subject))
    this.waiting.clear()
  }

  private settle(msg: Msg): void {
    const token = msg.subject.slice(this.prefix.length)
    const w = this.waiting.get(token)
    // An answer after its deadline: the caller was already told there was none.
    if (!w) return
    this.waiting.delete(token)
    // The server's own answer when nobody subscribes: status 503 and no payload.
    if (msg.data.length === 0 && msg.headers?.code === 503)
      w.reject(new ReplyError('no_responders', w.subject))
    else w.resolve(msg)
  }

  private expire(): void {
    const now = Date.now()
    for (const [token, w] of this.waiting) {
      if (w.deadline > now) continue
      this.waiting.delete(token)
      w.reject(new ReplyError('timeout', w.subject))
    }
  }
}
