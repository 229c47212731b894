/**
 * At most `size` emails in flight at once, across every dispatch message (a message may name one
 * email or fifty). Waiters are served in arrival order. `close()` turns away everyone still
 * waiting, so a stopping dispatcher finishes only the emails it has started.
 */
export class Slots {
  private used = 0
  private closed = false
  private readonly waiting: Array<(granted: boolean) => void> = []

  constructor(private readonly size: number) {}

  /** Runs `work` in a slot; `null` without running it if the slots were closed first. */
  async run<T>(work: () => Promise<T>): Promise<T | null> {
    if (!(await this.acquire())) return null
    try {
      return await work()
    } finally {
      this.release()
    }
  }

  close(): void {
    this.closed = true
    for (const w of this.waiting.splice(0)) w(false)
  }

  get inUse(): number {
    return this.used
  }

  private acquire(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false)
    if (this.used < this.size) {
      this.used++
      return Promise.resolve(true)
    }
    return new Promise((resolve) => this.waiting.push(resolve))
  }

  // A freed slot passes straight to the next waiter, so `used` never dips below what is running.
  private release(): void {
    const next = this.waiting.shift()
    if (next) next(true)
    else this.used--
  }
}
