import { setTimeout as sleep } from 'node:timers/promises'

/** How a request ended, as a client sees it. */
export type Outcome = 'ok' | 'unavailable' | 'limited' | 'refused' | 'hang' | 'other'
export const OUTCOMES: Outcome[] = ['ok', 'unavailable', 'limited', 'refused', 'hang', 'other']

/** A request that took longer than this counts as a hang (the issue: "a few seconds"). */
export const CLIENT_TIMEOUT_MS = 5_000

export interface Accepted {
  id: string
  phase: string
  to: string
}

/**
 * Steady live sends through the gateway while faults come and go: `clients` loops, each sending
 * one email at a time with its own idempotency key and recipient, and retrying the same key after
 * a 503, a 429, a refused connection or a time-out, as a careful client does (so an email whose
 * 202 was lost is answered again, not sent twice). Every attempt is counted under the phase
 * (fault) during which it ended; an email belongs to the phase of its first 202.
 */
export class SteadyLoad {
  phase = 'warm-up'
  readonly accepted = new Map<number, Accepted>()
  readonly counts = new Map<string, Record<Outcome, number>>()
  readonly samples: string[] = []
  /** Per phase, the longest any request took to end (answered, refused or timed out). */
  readonly slowestMs = new Map<string, number>()
  private running = false
  private loops: Promise<void>[] = []
  private next = 0

  constructor(
    private readonly baseUrl: string,
    private readonly key: string,
    private readonly from: string,
    private readonly opts: { clients: number; pauseMs: number },
  ) {}

  start(): void {
    this.running = true
    this.loops = Array.from({ length: this.opts.clients }, () => this.loop())
  }

  async stop(): Promise<void> {
    this.running = false
    await Promise.all(this.loops)
  }

  private count(phase: string, o: Outcome, detail?: string): void {
    const c = this.counts.get(phase) ?? { ok: 0, unavailable: 0, limited: 0, refused: 0, hang: 0, other: 0 }
    c[o]++
    this.counts.set(phase, c)
    if (detail && this.samples.filter((x) => x.startsWith(`[${phase}] ${o}`)).length < 3)
      this.samples.push(`[${phase}] ${o}: ${detail}`)
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const seq = this.next++
      const to = `r${seq}@example.com`
      // Until this email is accepted (or refused for good): retries keep the key.
      for (;;) {
        const t0 = Date.now()
        const r = await this.attempt(seq, to)
        // Counted under the fault going on when the answer (or the lack of one) came.
        const phase = this.phase
        this.count(phase, r.outcome, r.detail)
        this.slowestMs.set(phase, Math.max(this.slowestMs.get(phase) ?? 0, Date.now() - t0))
        if (r.outcome === 'ok') {
          if (!this.accepted.has(seq)) this.accepted.set(seq, { id: r.id!, phase, to })
          break
        }
        if (r.outcome === 'other' || !this.running) break
        await sleep(r.outcome === 'limited' ? 1_000 : 200)
      }
      await sleep(this.opts.pauseMs)
    }
  }

  private async attempt(
    seq: number,
    to: string,
  ): Promise<{ outcome: Outcome; id?: string; detail?: string }> {
    let res: Response
    try {
      res = await fetch(`${this.baseUrl}/v1/emails`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.key}`,
          'content-type': 'application/json',
          'idempotency-key': `fault-${seq}`,
        },
        body: JSON.stringify({ from: this.from, to, subject: `Fault run ${seq}`, text: `Email ${seq}` }),
        signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
      })
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } }
      const at = new Date().toISOString().slice(11, 23)
      if (e.name === 'TimeoutError')
        return { outcome: 'hang', detail: `${at} no answer in ${CLIENT_TIMEOUT_MS} ms` }
      return {
        outcome: 'refused',
        detail: `${at} ${e.cause?.code ?? ''} ${(e.cause as Error | undefined)?.message ?? e.message}`,
      }
    }
    let body: any
    try {
      body = await res.json()
    } catch {
      body = null
    }
    if (res.status === 202 && typeof body?.id === 'string') return { outcome: 'ok', id: body.id }
    // The contract's error bodies (contract.md part 0), not just any 503 or 429.
    const e = body?.error
    const message = typeof e?.message === 'string' && e.message.length > 0
    if (res.status === 503 && message && e.type === 'internal_error' && e.code === 'service_unavailable')
      return { outcome: 'unavailable' }
    if (
      res.status === 429 &&
      message &&
      e.type === 'rate_limit_error' &&
      (e.code === 'rate_limited' || e.code === 'daily_limit_exceeded')
    )
      return { outcome: 'limited' }
    return { outcome: 'other', detail: `${res.status} ${JSON.stringify(body).slice(0, 200)}` }
  }
}
