export interface BatcherOptions<T> {
  /** Flush as soon as this many items are waiting. */
  maxSize: number
  /** Flush at the latest this long after the first item of a batch arrived. */
  maxWaitMs: number
  /** Handles one batch; a throw rejects every `add` of that batch. */
  flush: (items: T[]) => Promise<void>
}

interface Pending<T> {
  item: T
  resolve: () => void
  reject: (err: unknown) => void
}

/**
 * Collects items into batches of at most `maxSize`, flushed when full or `maxWaitMs` after the
 * first item, one batch at a time: items that arrive while a batch is being written form the next
 * batch, which is flushed as soon as the current one is done. `add` resolves once its batch has
 * been flushed.
 */
export class Batcher<T> {
  private pending: Pending<T>[] = []
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined

  constructor(private readonly opts: BatcherOptions<T>) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject })
      if (this.pending.length >= this.opts.maxSize) this.kick()
      else if (!this.running && !this.timer) this.timer = setTimeout(() => this.kick(), this.opts.maxWaitMs)
    })
  }

  /** Flushes whatever is waiting and resolves when nothing is left. */
  async drain(): Promise<void> {
    this.kick()
    while (this.running) await this.running
  }

  get size(): number {
    return this.pending.length
  }

  private kick(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    if (this.running) return
    this.running = this.loop().finally(() => {
      this.running = undefined
    })
  }

  private async loop(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.opts.maxSize)
      try {
        await this.opts.flush(batch.map((p) => p.item))
        for (const p of batch) p.resolve()
      } catch (err) {
        for (const p of batch) p.reject(err)
      }
    }
  }
}
